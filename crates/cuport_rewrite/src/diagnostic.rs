//! Everything cuport could not port automatically becomes a coded
//! diagnostic: nothing is dropped silently.
use cuport_model::{Code, Effort, Library, SiteKind, TextRange};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// How much attention a diagnostic needs, lowest first. `--fail-on LEVEL`
/// fails on this level and every level above it.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Level {
    /// Worth knowing (a CUDA-version condition, a setup requirement).
    Note,
    /// Ported, but numerics or semantics differ.
    Approximate,
    /// Needs a person: no automatic equivalent, or a name the tables do not know.
    Manual,
    /// The target has no counterpart.
    Unsupported,
}

impl Level {
    pub fn id(self) -> &'static str {
        match self {
            Level::Note => "note",
            Level::Approximate => "approximate",
            Level::Manual => "manual",
            Level::Unsupported => "unsupported",
        }
    }

    /// Whether a site with this level is left for a person.
    pub fn is_unported(self) -> bool {
        matches!(self, Level::Manual | Level::Unsupported)
    }
}

/// One of cuport's own codes: what it means, for SARIF's rule list, the
/// docs (`mappings/README.md` lists them; a test keeps the list in step) and
/// `cuport rules explain`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CodeInfo {
    pub code: Code,
    /// Whether the code labels diagnostics (`true`) or edits cuport adds
    /// on its own (a header, an import, a dual-stack spelling).
    pub diagnostic: bool,
    pub summary: &'static str,
}

/// Declares each code once: the constant the rewriter uses and its row in
/// [`CODES`], so the two cannot drift apart.
macro_rules! cuport_codes {
    ($( $(#[$doc:meta])* $name:ident = $code:literal, $diagnostic:literal, $summary:literal; )+) => {
        /// Codes of diagnostics (and edits) that come from cuport itself
        /// rather than a table row. Once published a code keeps its meaning.
        pub mod codes {
            $( $(#[$doc])* pub const $name: ::cuport_model::Code = ::cuport_model::Code::from_literal($code); )+
        }

        /// Every code of [`codes`], in order.
        pub const CODES: &[CodeInfo] = &[
            $( CodeInfo { code: Code::from_literal($code), diagnostic: $diagnostic, summary: $summary }, )+
        ];
    };
}

cuport_codes! {
    /// A CUDA name the rule tables do not know for this target.
    UNKNOWN_NAME = "CP0001", true, "A CUDA name the rule tables do not know for this target";
    /// A rewrite template could not be applied to this call.
    TEMPLATE_FAILED = "CP0002", true, "A rewrite template could not be applied to this call";
    /// A mapped name used in a way the rewrite cannot handle (aliased, not called).
    NOT_REWRITABLE = "CP0003", true, "A mapped name used in a way the rewrite cannot handle (aliased, not called)";
    /// Two edits overlapped; the later one was not applied.
    EDIT_CONFLICT = "CP0004", true, "Two edits overlapped; the later one was not applied";
    /// The rewrite calls a cuport helper (declared in `cuport_shim.h`,
    /// implemented in the generated helper source).
    HELPER_REQUIRED = "CP0005", true, "The rewrite calls a cuport helper written with the port (cuport_shim.h and its implementation)";
    /// A kernel definition that needs a hand port on this target.
    KERNEL_MANUAL = "CP0010", true, "A kernel definition that needs a hand port on this target";
    /// A kernel launch that needs a hand port on this target.
    LAUNCH_MANUAL = "CP0011", true, "A kernel launch that needs a hand port on this target";
    /// Code that assumes a 32-wide warp.
    WARP_SIZE = "CP0012", true, "Code that assumes a 32-wide warp";
    /// A preprocessor condition on the CUDA version.
    CUDA_VERSION_CONDITION = "CP0013", true, "A preprocessor condition on the CUDA version";
    /// Runtime setup the target needs (aclInit, device and stream setup).
    SETUP_REQUIRED = "CP0014", true, "Runtime setup the target needs (aclInit, device and stream setup)";
    /// A project's own definition the target already provides (a compound
    /// assignment on a vector type), compiled out where the target's is.
    TARGET_PROVIDES = "CP0015", true, "A project's own definition the target already provides, compiled out there";
    /// The rule's target name needs a newer SDK release than the one the
    /// port is made for (`--cann-version`, `--rocm-version`).
    SDK_TOO_OLD = "CP0016", true, "The target name needs a newer SDK release than the selected one (--cann-version, --rocm-version)";
    /// An API name (not a macro) tested in a preprocessor condition:
    /// `#ifdef cuDeviceGetUuid_v2`, `#if LOWP == CUDA_R_16BF`.
    API_NAME_IN_CONDITION = "CP0017", true, "An API name tested in a preprocessor condition, left as written";
    /// A project's overloads on two CUDA types that become one target type
    /// (`f(cudaError_t)` and `f(CUresult)` on HIP): a redefinition.
    OVERLOADS_COLLAPSE = "CP0018", true, "A project's overloads on two CUDA types that the port makes one type";
    /// A variable whose CUDA type the port changes, passed to a member call
    /// cuport leaves alone (`graph->execute(cudnn_handle, ...)`).
    RETYPED_ARGUMENT = "CP0019", true, "A variable whose type the port changes, passed to a member call cuport does not port";
    /// A build rule cuport does not rewrite.
    BUILD_MANUAL = "CP0020", true, "A build rule cuport does not rewrite";
    /// A package that only runs on NVIDIA GPUs.
    CUDA_ONLY_PACKAGE = "CP0021", true, "A package that only runs on NVIDIA GPUs";
    /// A handle that is an integer in CUDA (`cudaTextureObject_t`) used in
    /// bit operations, where the target's is a pointer.
    INTEGER_HANDLE = "CP0022", true, "A handle that is an integer in CUDA used in bit operations, where the target's is a pointer";
    /// A variable-length array with an initialiser: g++ (nvcc's host
    /// compiler) accepts it, clang-based compilers (hipcc, mcc) do not.
    INITIALISED_VLA = "CP0023", true, "A variable-length array with an initialiser, which clang-based compilers (hipcc, mcc) reject";
    /// A launch or kernel that may exceed the SIMT model's limits (blocks
    /// per grid, threads per block, shared memory per block).
    SIMT_LIMIT = "CP0024", true, "A launch or kernel that may exceed the SIMT model's limits (blocks per grid, threads per block, shared memory per block)";
    /// Double precision in device code: the SIMT model's API declares no
    /// double function.
    SIMT_DOUBLE = "CP0025", true, "Double precision in device code, which the SIMT model's API does not have";
    /// A kernel launched (dynamic parallelism) or memory allocated from
    /// device code.
    SIMT_DEVICE_LAUNCH = "CP0026", true, "A kernel launch or a memory allocation in device code, which the SIMT model does not have";
    /// `printf` in device code: the SIMT model buffers it, with limits.
    SIMT_PRINTF = "CP0027", true, "printf in device code, which the SIMT model buffers with limits on size and formats";
    /// A launch (`--hip-kernel-launch ggl`) or a call rewritten through a
    /// template whose configuration or arguments hold preprocessor
    /// directive lines: kept as written, since a rewrite would put code on a
    /// directive line or move a directive into a macro's arguments.
    DIRECTIVE_IN_ARGUMENTS = "CP0029", true, "A launch or rewritten call whose arguments hold preprocessor directives, kept as written";
    /// An edit: a header the target needs, added at the top of the file.
    HEADER_ADDED = "CP0030", false, "A header the target needs, added to the file";
    /// An edit: an import the target needs (`import torch_npu`).
    IMPORT_ADDED = "CP0031", false, "An import the target needs, added to the file";
    /// An edit: a reference to a source file `--rename-sources` renamed.
    RENAMED_SOURCE = "CP0032", false, "A reference (include, build file) to a source file --rename-sources renamed";
    /// `min`/`max` in device code: the SIMT model declares them for
    /// integer types only.
    SIMT_MIN_MAX = "CP0028", true, "min or max in device code, which the SIMT model declares for integer types only";
    /// An edit: the lines a SIMT build needs before `project()`
    /// (`find_package(ASC)` and the switch that enables SIMT).
    SIMT_BUILD = "CP0033", false, "The lines a SIMT build needs before project(): the ASC language package and the SIMT switch";
    /// A Makefile's nvcc build (the compiler, an nvcc option, a CUDA
    /// library or path) where cuport does not port Makefiles: targets
    /// without `[make]` facts, and dual-stack runs.
    MAKE_NOT_PORTED = "CP0034", true, "A Makefile's nvcc build (compiler, option, library, path) cuport does not port for this target or mode";
    /// A name of a CUDA library the tables do not map for this target,
    /// whose counterpart library on the target is named (`[[counterpart]]`
    /// in the target profile).
    LIBRARY_COUNTERPART = "CP0035", true, "A name of a CUDA library the rule tables do not map for this target; the target's counterpart library is named";
    /// A kernel a `[[kernel]]` rule maps to vendor operators: its
    /// definition became the function that runs them, and its launches call
    /// that function.
    KERNEL_OPERATOR = "CP0036", true, "A kernel replaced by the vendor operators its [[kernel]] rule names; its launches call the generated function";
    /// A `[[kernel]]` rule that names a kernel but was not applied (its
    /// parameters differ, a template kernel, or an operator the selected
    /// release is not known to have).
    KERNEL_RULE_NOT_APPLIED = "CP0037", true, "A [[kernel]] rule naming this kernel that was not applied (stale parameters, a template kernel, or an operator the selected release lacks)";
    /// A kernel a `[[kernel]]` rule maps to operators of a target whose
    /// operator tables no header checked (CNNL on MLU): the diagnostic names
    /// the calls and their header; no code is generated, since nothing could
    /// compile-check it.
    KERNEL_OPERATOR_UNCHECKED = "CP0038", true, "A kernel a [[kernel]] rule maps to operators no header checked (CNNL): the calls are named, no code is generated";
    /// CUDA's host `max`/`min` (nvcc's math headers declare them for host
    /// code), which the target's host compiler lacks: the call became a
    /// cuport helper that compares in the same common type.
    HOST_MIN_MAX = "CP0039", true, "CUDA's host max or min, which the target's host compiler lacks, replaced by a cuport helper";
    /// Dual-stack: the source keeps a CUDA spelling that a target spells
    /// differently and the shim cannot provide (a preprocessor test, C++
    /// framework API, build rule).
    DUAL_KEPT = "CP0040", true, "Dual-stack: a CUDA spelling kept for CUDA that a target spells differently";
    /// A call of a function the target has, with an argument type it has
    /// no overload for (`atomicAdd` on bfloat16 on HIP; the profile's
    /// `[[missing-overload]]`).
    MISSING_OVERLOAD = "CP0044", true, "A call the target declares no overload of for this argument type (atomicAdd on bfloat16 on HIP)";
    /// A call of a function the target has no overload of for the
    /// argument's type, renamed to a cuport helper that does what CUDA's
    /// overload does (`[[missing-overload]]`'s `helper`: bfloat16
    /// `atomicAdd` on HIP 6.2 and later).
    OVERLOAD_HELPER = "CP0045", true, "A call the target declares no overload of for this argument type, renamed to a cuport helper (bfloat16 atomicAdd on HIP)";
    /// A CUDA runtime call or a kernel launch in device code (CUDA's device
    /// runtime), where the target has none (`[device-runtime]`: HIP's
    /// runtime API is host-only).
    DEVICE_RUNTIME = "CP0046", true, "A CUDA runtime call or kernel launch in device code (CUDA's device runtime), which the target does not have";
    /// An edit: the `register` storage class removed, which clang-based
    /// compilers reject in C++17 and which has no effect in C++.
    REGISTER_REMOVED = "CP0043", false, "The register storage class removed (clang-based compilers reject it in C++17; it has no effect)";
    /// Dual-stack: a kernel launch or definition that cannot be put behind
    /// the backend switch automatically.
    DUAL_NOT_WRAPPED = "CP0041", true, "Dual-stack: a kernel launch or definition that cannot be put behind the backend switch";
    /// Dual-stack: an edit to the portable spelling (not a diagnostic; the
    /// code labels the edit in reports).
    DUAL_PORTABLE = "CP0042", false, "Dual-stack: a name rewritten to its portable spelling";
    /// Dual-stack Python: a dtype a selected target does not support (fp64
    /// on Ascend). The code is kept; nothing converts it silently.
    DUAL_UNSUPPORTED_DTYPE = "CP0050", true, "Dual-stack Python: a dtype a selected target does not support";
    /// A CMake `file(GLOB ...)` of `.cu` sources that cuport cannot mark
    /// with the target's language: the glob also matches other files, or
    /// its paths are `RELATIVE` to another directory.
    CMAKE_GLOB_SOURCES = "CP1093", true, "A CMake file(GLOB) of .cu sources cuport cannot mark LANGUAGE HIP (other files in the glob, RELATIVE paths)";
    /// An edit: `.cu` sources of a CMake target marked with the target's
    /// language (`set_source_files_properties(... PROPERTIES LANGUAGE HIP)`).
    HIP_SOURCE_LANGUAGE = "CP1094", false, "CMake .cu sources marked LANGUAGE HIP (CMake's HIP language compiles only .hip files by default)";
    /// A `dim3` initialised from a `uint3` a call returns: HIP's `dim3` does
    /// not convert from `uint3`, and `dim3(v.x, v.y, v.z)` would call it
    /// three times.
    DIM3_FROM_UINT3_CALL = "CP1095", true, "A dim3 initialised from the uint3 a call returns (HIP's dim3 does not convert from uint3)";
    /// An edit: `make_uint3(...)` that initialises a `dim3`, written with the
    /// target's `dim3(x, y, z)` (HIP's dim3 does not convert from uint3).
    DIM3_CONSTRUCTOR = "CP1096", false, "A make_uint3(...) that initialises a dim3, written dim3(...) (HIP's dim3 does not convert from uint3)";
    /// An edit: a built-in coordinate (`blockDim.x`) passed to `min`/`max`,
    /// cast to CUDA's `unsigned int` where the target's is a proxy object.
    COORDINATE_CAST = "CP1097", false, "A built-in coordinate (blockDim.x) passed to min/max, cast to unsigned int as CUDA's is (HIP's is a proxy object)";
    /// An edit: the signed argument of CUDA's `min`/`max` for a signed and
    /// an unsigned integer cast to the unsigned type, the conversion CUDA's
    /// overload makes (the target lacks the overload).
    MIXED_SIGN_CAST = "CP1092", false, "The signed argument of min/max(signed, unsigned) cast to the unsigned type, as CUDA's overload converts it (HIP lacks the overload)";
    /// An edit: a launch written `<< <` ... `>> >` respelled `<<<` ... `>>>`,
    /// which clang-based compilers (hipcc, mcc) need.
    LAUNCH_SPELLING = "CP1098", false, "A kernel launch written << < ... >> > respelled <<< ... >>> (clang-based compilers need it)";
    /// An edit: a HIP launch written as `hipLaunchKernelGGL`
    /// (`--hip-kernel-launch ggl`).
    HIP_GGL_LAUNCH = "CP1099", false, "A kernel launch written as hipLaunchKernelGGL (--hip-kernel-launch ggl)";
}

/// The registry row of one of cuport's own codes.
pub fn code_info(code: Code) -> Option<&'static CodeInfo> {
    CODES.iter().find(|c| c.code == code)
}

/// What the rewriter found at one spot. Reports serialize it as
/// `cuport_report`'s `DiagnosticRecord`, the one shape users see.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub level: Level,
    /// How much work is left at this spot; none: the level's default.
    pub effort: Option<Effort>,
    pub message: String,
    pub line: u32,
    pub column: u32,
    pub range: TextRange,
    pub cuda_name: String,
    pub library: Library,
    pub kind: SiteKind,
    pub suggestion: Option<String>,
    pub reference: Option<String>,
}

impl Diagnostic {
    /// A diagnostic on `site` (its range, name, library and kind), with no
    /// effort, suggestion or reference of its own.
    pub(crate) fn on_site(
        site: &cuport_analyze::Site,
        lines: &cuport_model::LineIndex,
        code: Code,
        level: Level,
        message: String,
    ) -> Diagnostic {
        let at = lines.line_col(site.range.start);
        Diagnostic {
            code,
            level,
            effort: None,
            message,
            line: at.line,
            column: at.column,
            range: site.range,
            cuda_name: site.name.clone(),
            library: site.library,
            kind: site.kind,
            suggestion: None,
            reference: None,
        }
    }

    /// `PATH:LINE:COL LEVEL CODE MESSAGE`: one plain line for logs and tests.
    pub fn plain_line(&self, path: &str) -> String {
        format!(
            "{path}:{}:{} {} {} {}",
            self.line,
            self.column,
            self.level.id(),
            self.code,
            self.message
        )
    }
}

/// Weight of a diagnostic in the effort estimate, in hours of engineer
/// time: a rough, documented scale so that estimates are comparable.
pub fn effort_hours(diagnostic: &Diagnostic) -> f64 {
    match (diagnostic.level, diagnostic.effort) {
        (Level::Note, _) | (_, Some(Effort::Included)) => 0.0,
        (_, Some(Effort::High)) => 16.0,
        (_, Some(Effort::Medium)) => 2.0,
        (_, Some(Effort::Low)) => 0.25,
        (Level::Approximate, _) => 0.25,
        (Level::Manual, _) => 1.0,
        (Level::Unsupported, _) => 4.0,
    }
}
