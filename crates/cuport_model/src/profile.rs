//! Facts about targets and CUDA libraries that are not single names, as
//! data: `mappings/<target>/target.toml` (how kernels compile, the runtime
//! header, build-system and Python packaging facts) and
//! `mappings/libraries.toml` (how a library's names are recognised, its
//! shim header and CMake target). Both are embedded at build time; the
//! rewriter, the shim generator and the classifier read them from here, so
//! a new target is an enum variant plus a data folder.
use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::{Library, SdkVersion, Target};

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/profiles.rs"));
}

/// How a target builds CUDA C++ kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum KernelModel {
    /// The target's compiler takes CUDA C++ kernels once names are renamed
    /// (HIP, MUSA): kernels and launches stay.
    Native,
    /// Kernels must be rewritten in the target's own kernel language
    /// (Ascend C, BANG C): every kernel and launch is a manual diagnostic.
    Port,
    /// The target's SIMT model takes CUDA-shaped kernels once device names
    /// are renamed through the rule tables' `simt` flavour (Ascend C SIMT):
    /// kernels and launches stay, and what the model lacks is reported.
    Simt,
}

/// How seriously a hard-coded 32-wide warp is reported on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WarpDiagnostic {
    /// The code compiles but may compute something else: manual.
    Manual,
    /// Goes with the kernel port anyway: a note.
    Note,
}

/// `mappings/<target>/target.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TargetProfile {
    pub target: TargetFacts,
    pub kernels: KernelFacts,
    pub warp: WarpFacts,
    #[serde(default)]
    pub python: PythonFacts,
    pub cmake: CmakeFacts,
    #[serde(default)]
    pub shim: ShimFacts,
    #[serde(default, rename = "vector-types")]
    pub vector_types: VectorTypeFacts,
    #[serde(default, rename = "builtin-coordinates")]
    pub builtin_coordinates: CoordinateFacts,
    #[serde(default, rename = "integer-handles")]
    pub integer_handles: IntegerHandleFacts,
    #[serde(default, rename = "provided-functions")]
    pub provided_functions: ProvidedFunctionFacts,
    #[serde(default)]
    pub versions: VersionFacts,
    #[serde(default, rename = "implicit-std-headers")]
    pub implicit_std_headers: ImplicitStdHeaders,
    #[serde(default, rename = "host-min-max")]
    pub host_min_max: HostMinMax,
    /// CUDA's `min`/`max` for a signed and an unsigned integer, which the
    /// target lacks (`[mixed-sign-min-max]`).
    #[serde(default, rename = "mixed-sign-min-max")]
    pub mixed_sign_min_max: MixedSignMinMax,
    /// CUDA's device runtime (runtime calls and kernel launches in device
    /// code), where the target lacks it (`[device-runtime]`).
    #[serde(default, rename = "device-runtime")]
    pub device_runtime: DeviceRuntimeFacts,
    /// Whether the target's compiler rejects the `register` storage class
    /// in C++17 (clang does: `-Wregister` is an error there; nvcc warns).
    #[serde(default, rename = "register-storage-class")]
    pub register_storage_class: RegisterStorageClass,
    /// How one-way ports write nvcc builds in Makefiles (absent: Makefiles
    /// are reported, not ported).
    #[serde(default)]
    pub make: Option<MakeFacts>,
    /// CUDA library APIs in a legacy form the target has no counterpart of
    /// (`[[legacy-api]]`: cuBLAS's handle-less cublas.h API on HIP).
    #[serde(default, rename = "legacy-api")]
    pub legacy_apis: Vec<LegacyApi>,
    /// The target's own libraries that correspond to CUDA libraries its
    /// tables do not (or not fully) map (`[[counterpart]]`): a name of such
    /// a library no rule maps is reported with the counterpart named.
    #[serde(default, rename = "counterpart")]
    pub counterparts: Vec<LibraryCounterpart>,
    /// Functions the target has without some of CUDA's overloads
    /// (`[[missing-overload]]`: HIP's atomicAdd takes no bfloat16): a call
    /// whose argument is of such a type is reported.
    #[serde(default, rename = "missing-overload")]
    pub missing_overloads: Vec<MissingOverload>,
    /// Where the vendor's own headers of each release lie in an unpacked
    /// header archive and which names they declare (`cuport rules
    /// check-headers`); absent: the tables are not checked against headers.
    #[serde(default, rename = "vendor-headers")]
    pub vendor_headers: Option<VendorHeaderFacts>,
}

/// How `cuport rules check-headers` finds a release's headers under the
/// directory it is given and which names it checks against them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VendorHeaderFacts {
    /// A release's include directory below the root, `{release}` standing
    /// for the release (`cann-{release}/include`).
    pub release_include: String,
    /// Include directories below the root that belong to no release tag
    /// (an untagged repository): a name found only there counts as present
    /// in every release, and the check lists it.
    #[serde(default)]
    pub untagged_include: Vec<String>,
    /// The API families checked: a name belongs to the family with the
    /// longest matching prefix; a release is checked for a family only when
    /// its headers hold the family's marker header.
    #[serde(rename = "family")]
    pub families: Vec<HeaderFamily>,
    /// What the check can and cannot conclude from these headers.
    pub note: String,
}

/// One API family of a target's vendor headers (`AscendCL`, `HCCL`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HeaderFamily {
    pub name: String,
    /// Prefixes of its names (`acl`, `ACL_`).
    pub prefixes: Vec<String>,
    /// A header (as included) whose presence says a release's headers hold
    /// the family (`hccl/hccl.h`).
    pub marker: String,
    /// The include folders of its headers (`hccl`): a header a row names
    /// under one of them must exist in each release the row applies to.
    pub include_dirs: Vec<String>,
    /// Where the family's headers come from, per release.
    pub source: String,
}

/// A vendor library that does for the target what a CUDA library does, with
/// the facts a porting engineer needs to port its calls by hand.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LibraryCounterpart {
    pub library: Library,
    /// The counterpart's name (`ops-fft`).
    pub name: String,
    /// The header its API is declared in, as included (`cann_ops_fft.h`).
    pub header: String,
    /// The prefix of its names (`aclfft`), where it has a C API.
    #[serde(default)]
    pub prefix: Option<String>,
    /// How far the two APIs correspond: what carries over, what does not.
    pub note: String,
    /// Repository, path and revision the facts were read from.
    pub source: String,
}

/// A legacy form of a CUDA library's API: in a file that includes `header`
/// and not `current_header`, a call of a name whose `name` + `suffix` form
/// the tables also know is the legacy function (same name, other
/// parameters), which the target lacks.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LegacyApi {
    pub library: Library,
    pub header: String,
    pub current_header: String,
    pub suffix: String,
    /// What to do, said in the diagnostic.
    pub note: String,
    pub reference: String,
}

/// What a Makefile that builds with nvcc needs on the target beyond the
/// renames of the rule tables (`[make]` in `target.toml`). The nvcc options
/// the target's compiler rejects are the CMake facts' (`dropped-flags`,
/// `host-option-forwarders` of `[cmake.one-way]`): they are the compiler's,
/// whatever build system passes them.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MakeFacts {
    /// The option that names one GPU to compile for (`--offload-arch`),
    /// written once per architecture for nvcc's `-arch`/`-gencode`.
    pub architecture_option: String,
    /// nvcc's options that name NVIDIA architectures (their value is the
    /// next word or follows `=`).
    pub architecture_flags: Vec<String>,
    /// nvcc options the target's compiler rejects and needs nothing for
    /// that take a value (`-ccbin g++`, `-t=0`): deleted with it.
    #[serde(default)]
    pub dropped_with_value: Vec<String>,
    pub reference: String,
}

/// C standard headers CUDA's runtime header brings into every file that
/// uses it (or that nvcc compiles) and the target's runtime header does
/// not: a file calling their functions without including them compiled
/// only thanks to CUDA.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ImplicitStdHeaders {
    /// Header to add (`cstring`; a C header such as `math.h` where only
    /// its C form declares what the file calls) → the functions of it a
    /// port may rely on.
    #[serde(default)]
    pub headers: BTreeMap<String, Vec<String>>,
    /// Only calls in host code count (`__host__ __device__` functions
    /// included): the target's device code has declarations of its own.
    #[serde(default)]
    pub host_only: bool,
    pub reference: Option<String>,
}

/// A function the target declares without CUDA's overloads for some
/// argument types.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MissingOverload {
    /// The CUDA function (`atomicAdd`).
    pub function: String,
    /// CUDA types of its argument at `argument`, or of what that argument
    /// points to, that the target has no overload for (`__nv_bfloat162`).
    #[serde(default)]
    pub types: Vec<String>,
    /// Which argument `types` is about, from 1 (absent: the first).
    pub argument: Option<usize>,
    /// Or: the number of arguments of CUDA's overload the target lacks
    /// (`surf2Dwrite` with a boundary mode, five).
    pub arguments: Option<usize>,
    /// The first release that lacks it (`5.6.0`); absent: every release.
    pub since: Option<SdkVersion>,
    /// What to write instead.
    pub note: String,
    pub reference: String,
    /// A cuport helper that does what CUDA's overload does, which such a
    /// call is renamed to where the selected release can compile it.
    pub helper: Option<OverloadHelper>,
}

/// A header-only helper (`[shim] headers`) with the overload a target
/// lacks (HIP: `cuport_atomicAdd` for bfloat16 in `cuport_atomic_half.h`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OverloadHelper {
    /// The function the call is renamed to.
    pub function: String,
    /// The `[shim] headers` file that defines it (`atomic_half.h`, written
    /// as `cuport_atomic_half.h`).
    pub header: String,
    /// The first release whose headers it compiles with; absent: every
    /// release.
    pub since: Option<SdkVersion>,
    /// How it differs from CUDA's overload.
    pub note: String,
}

/// CUDA's host `max`/`min` overloads (nvcc's math headers declare them for
/// host code too), which the target's host compiler lacks: each call in a
/// `.cu` file's host code becomes the named helper of `header` (a `[shim]`
/// header-only helper).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct HostMinMax {
    /// CUDA name (`max`) → the helper (`cuport_max`).
    #[serde(default)]
    pub helpers: BTreeMap<String, String>,
    pub header: Option<String>,
    pub reference: Option<String>,
}

/// CUDA declares `min` and `max` for a signed and an unsigned integer of
/// one rank (`min(int, unsigned int)`), comparing as unsigned; a target
/// without those overloads resolves such a call to another (HIP: a
/// floating-point template). The signed argument is cast to the unsigned
/// type where the file's text says both types, which is the conversion
/// CUDA's overload makes.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct MixedSignMinMax {
    /// The functions (`min`, `max`).
    #[serde(default)]
    pub calls: Vec<String>,
    /// CUDA's overloads the target lacks, as `[signed, unsigned]` type
    /// spellings (`["int", "unsigned int"]`).
    #[serde(default)]
    pub pairs: Vec<[String; 2]>,
    /// The cast written around the signed argument, `{type}` standing for
    /// the unsigned type (`static_cast<{type}>`).
    pub cast: Option<String>,
    /// Where CUDA declares the overloads and where the target resolves
    /// such a call otherwise.
    pub reference: Option<String>,
}

/// CUDA's device runtime (cudadevrt): the runtime functions
/// `cuda_runtime_api.h` marks `__cudart_builtin__` may be called from
/// device code, and kernels may launch kernels (dynamic parallelism).
/// A target whose runtime API is host-only gets each such call and launch
/// in a kernel or `__device__` function reported.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct DeviceRuntimeFacts {
    /// The target has no device runtime: its runtime API is host-only and
    /// its kernels are launched from the host only.
    #[serde(default)]
    pub absent: bool,
    /// What to do instead (the diagnostic's suggestion).
    pub note: Option<String>,
    pub reference: Option<String>,
}

/// The `register` storage class on the target's compiler.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct RegisterStorageClass {
    /// C++17 code with `register` does not compile: the port removes the
    /// keyword from C++ sources (it has no effect in C++).
    #[serde(default)]
    pub rejected: bool,
    pub reference: Option<String>,
}

/// Functions the target defines that CUDA does not (HIP's
/// `atomicMax(double*, double)`): a project's own definition with the same
/// parameters is a redefinition there, so it is compiled out where `guard`
/// is defined.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ProvidedFunctionFacts {
    /// A macro defined wherever the target's definitions are.
    pub guard: Option<String>,
    /// `atomicMax(double*, double)`: the name and parameter types.
    #[serde(default)]
    pub signatures: Vec<String>,
    /// Where the target defines them.
    pub reference: Option<String>,
}

/// CUDA handle types that are integers in CUDA but pointers on the target
/// (`cudaTextureObject_t`: `unsigned long long` there, `struct
/// __hip_texture *` on HIP): bit operations on them do not port.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct IntegerHandleFacts {
    /// The CUDA type names.
    #[serde(default)]
    pub types: Vec<String>,
    /// Where the target's declarations are.
    pub reference: Option<String>,
}

/// Where the target's built-in coordinates (`blockDim.x`) are not plain
/// `unsigned int` values, so overloads that take them as CUDA's would be
/// ambiguous (HIP: proxy objects with a conversion operator).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CoordinateFacts {
    /// The built-in variables whose `.x`/`.y`/`.z` are proxies.
    #[serde(default)]
    pub variables: Vec<String>,
    /// Functions in whose arguments such a member is cast (`min`, `max`).
    #[serde(default)]
    pub calls: Vec<String>,
    /// The cast written around it, CUDA's type (`static_cast<unsigned int>`).
    pub cast: Option<String>,
    /// Where that is documented (the target's headers).
    pub reference: Option<String>,
}

/// The vendor SDK whose releases the rules' `target-version` minimums name
/// (`CANN >= 9.1.0`), and which release a port is made for by default.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VersionFacts {
    /// The product rows name (`CANN`, `HIP`); rows naming another are not gated.
    pub product: Option<String>,
    /// The command-line flag (and `cuport.toml` key) that selects a release.
    pub flag: Option<String>,
    /// The release ports are made for when none is selected; absent: none
    /// (every rule applies).
    pub default: Option<SdkVersion>,
    /// The oldest release cuport makes ports for.
    pub oldest: Option<SdkVersion>,
    /// Where the release facts come from.
    pub reference: Option<String>,
    /// Macros the generated shim header defines to 1 or 0 for the selected
    /// release, so the helpers call the APIs that release has.
    #[serde(default)]
    pub feature: Vec<VersionFeature>,
}

impl VersionFacts {
    /// The flag that selects a release, without dashes (`cann-version`).
    pub fn flag_name(&self) -> &str {
        self.flag.as_deref().unwrap_or("sdk-version")
    }

    /// `CANN 8.2.RC1 (--cann-version)`: a selected release as messages say it.
    pub fn describe(&self, selected: SdkVersion) -> String {
        let product = self.product.as_deref().unwrap_or("SDK");
        format!("{product} {selected} (--{})", self.flag_name())
    }
}

/// `#define MACRO 1` in the shim when the selected release is `since` or
/// newer (0 otherwise, and when no release is selected: 1).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VersionFeature {
    #[serde(rename = "macro")]
    pub macro_name: String,
    pub since: SdkVersion,
    /// What the macro switches and where the fact comes from.
    pub note: String,
}

/// What the target's own vector types (`float4`, ...) bring that CUDA's
/// do not.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct VectorTypeFacts {
    /// A macro defined wherever the target's vector types define the
    /// compound assignments with an operand of their own type
    /// (`operator+=(const V&)`): a project's own `operator+=(V&, V)` is
    /// ambiguous there and is compiled out where the macro is defined.
    pub compound_operators_guard: Option<String>,
    /// The operators the target's vector types define as non-template
    /// members (`+=`, `++`): only a project's own operator among these
    /// (with a vector operand) is ambiguous there and compiled out; the
    /// others (HIP's `%=` is a member template, its binary operators are
    /// templates) lose overload resolution to the project's and stay.
    #[serde(default)]
    pub member_operators: Vec<String>,
    /// The binary operators the target's vector types define as
    /// non-template friends for two operands of the type (HIP from 5.7:
    /// `*`, `/`): a project's own `operator*(V, V)` is ambiguous there too.
    #[serde(default)]
    pub friend_operators: Vec<String>,
    /// Where the target's `dim3` has no constructor from its `uint3`
    /// (CUDA's has `dim3(uint3)`): the constructor that takes the three
    /// values instead, written for a `make_uint3(...)` that initialises
    /// or is assigned to a `dim3`.
    pub dim3_from_values: Option<String>,
    /// Where that is documented (the target's header).
    pub reference: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct TargetFacts {
    /// The stack's name in messages (`Huawei Ascend`).
    pub name: String,
    /// Rule codes of this target are CP<digit>xxx.
    pub code_digit: u16,
    /// Added to `.cu` files that relied on nvcc's implicit runtime include.
    pub runtime_header: String,
    /// `--rename-sources`: CUDA source extension → the target's.
    #[serde(default)]
    pub source_renames: BTreeMap<String, String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct KernelFacts {
    pub model: KernelModel,
    /// The language kernels are written in on the target (`Ascend C`).
    pub language: String,
    /// What a person does with a kernel that needs a port.
    pub guidance: String,
    /// The target's compiler is clang-based (hipcc, mcc): GNU extensions
    /// that g++ accepts as nvcc's host compiler, such as an initialised
    /// variable-length array, are errors there.
    #[serde(default)]
    pub clang_frontend: bool,
    /// A SIMT model the user may choose instead of `model`.
    #[serde(default)]
    pub simt: Option<SimtFacts>,
}

/// A target's SIMT kernel model (Ascend C SIMT): CUDA-shaped kernels in
/// files of their own extension, built for the products that have it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SimtFacts {
    /// The kernel language in messages (`Ascend C SIMT`).
    pub language: String,
    /// The command-line flag (and `cuport.toml` key) that chooses between
    /// `model` (its `default-value`) and this one (`simt`).
    pub flag: String,
    pub default_value: String,
    /// The oldest SDK release that takes CUDA-shaped kernels, and why no
    /// older one does.
    pub since: SdkVersion,
    pub since_note: String,
    /// The products that run SIMT kernels, as messages name them.
    pub products: String,
    /// Source renames (`cu = "asc"`): a file with kernels is compiled as
    /// the model's language only under its extension.
    pub source_renames: BTreeMap<String, String>,
    /// The header that declares the device API (`simt_api/asc_simt.h`),
    /// added where nvcc's implicit device declarations were relied on.
    pub device_header: String,
    /// The macro the model's compiler defines for device code, which its
    /// device headers are guarded by (`__NPU_ARCH__`).
    pub device_guard: String,
    pub limits: SimtLimits,
    /// The generated build glue: CMake's language for kernel sources and
    /// the settings that select the architecture and the model.
    pub cmake: SimtCmake,
    /// Where these facts come from.
    pub reference: String,
}

/// Where the SIMT model differs from CUDA's launch limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SimtLimits {
    pub warp_size: u32,
    /// Threads per block without `__launch_bounds__`, and the most with it.
    pub threads_per_block: u64,
    pub threads_per_block_bounded: u64,
    /// Blocks per launch, over all grid dimensions together.
    pub blocks_per_grid: u64,
    /// Static plus dynamic shared memory (Unified Buffer) per block.
    pub shared_bytes: u64,
    pub reference: String,
}

/// The CMake settings a SIMT build needs.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct SimtCmake {
    /// The CMake language of kernel sources (`ASC`).
    pub language: String,
    /// Lines that must come before `project()` (the language's package and
    /// the switches it reads when it is found), in order.
    pub before_project: Vec<String>,
    /// The architecture list variable and the value SIMT needs.
    pub architectures_variable: String,
    pub architectures: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct WarpFacts {
    pub diagnostic: WarpDiagnostic,
    /// After "`NAME` ": what is wrong on this target. Absent on targets
    /// without warps (the kernel port covers it).
    pub message: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct PythonFacts {
    /// Whether the target's PyTorch has float64 tensors.
    #[serde(default = "yes")]
    pub fp64: bool,
    /// Where the missing fp64 support is documented.
    pub fp64_reference: Option<String>,
    /// Sources the target's extension class compiles for the device.
    #[serde(default)]
    pub extension_sources: Vec<String>,
    /// The `extra_compile_args` key of the device compiler.
    pub extension_compiler: Option<String>,
    /// The build_ext class when the tables map none.
    #[serde(default = "torch_build_ext")]
    pub build_ext: String,
    #[serde(default)]
    pub build_ext_unconfirmed: bool,
}

impl Default for PythonFacts {
    fn default() -> Self {
        Self {
            fp64: true,
            fp64_reference: None,
            extension_sources: Vec::new(),
            extension_compiler: None,
            build_ext: torch_build_ext(),
            build_ext_unconfirmed: false,
        }
    }
}

fn yes() -> bool {
    true
}

fn torch_build_ext() -> String {
    "torch.utils.cpp_extension.BuildExtension".into()
}

/// What the generated `cuport/cuport.cmake` does for the target.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct CmakeFacts {
    /// The CMake language `.cu` sources are compiled as.
    pub language: String,
    /// A CMake package to find (`hip`).
    pub find_package: Option<String>,
    /// The environment variable naming the toolkit root, and its default.
    pub home_variable: Option<String>,
    pub home_default: Option<String>,
    /// A comment written into the module for this backend.
    pub note: Option<String>,
    /// How a one-way port writes CUDA-only CMake settings for the target
    /// (absent: the rule tables alone decide).
    #[serde(default)]
    pub one_way: Option<OneWayCmake>,
}

/// CUDA-only CMake settings and their form on the target, for one-way
/// ports (`[cmake.one-way]` in `target.toml`).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct OneWayCmake {
    /// The compile and link option CUDA_SEPARABLE_COMPILATION becomes.
    pub relocatable_device_code: String,
    /// GPU architectures written for NVIDIA architecture numbers when the
    /// run names none (`--hip-arch`), and why these.
    pub architectures: Vec<String>,
    pub architectures_note: String,
    /// CUDA target properties the target needs nothing for (deleted).
    #[serde(default)]
    pub dropped_properties: Vec<String>,
    /// nvcc options the target's compiler rejects and needs nothing for.
    #[serde(default)]
    pub dropped_flags: Vec<String>,
    /// nvcc options that pass options to the host compiler, which the
    /// target's compiler takes directly (`-Xcompiler=-Wall,-Wextra`).
    #[serde(default)]
    pub host_option_forwarders: Vec<String>,
    /// Why a static library with relocatable device code needs a hand at
    /// link time, where it does (absent: it links as it is).
    #[serde(default)]
    pub rdc_static_library: Option<String>,
    pub reference: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct ShimFacts {
    /// The helper implementation written with ports whose rewrites call
    /// cuport helpers (the tables' `[[helper]]` declarations).
    pub helper_source: Option<String>,
    /// What the functions replacing kernels mapped to vendor operators
    /// share (`[[kernel]]` rules), written as `cuport_kernel_ops.h`.
    #[serde(default)]
    pub kernel_operators: Option<String>,
    /// Header-only helpers written as `cuport_<name>` beside a one-way port
    /// whose output includes them (a rule's `headers` names
    /// `cuport_<name>`), from `mappings/<target>/helpers/<name>`.
    #[serde(default)]
    pub headers: Vec<String>,
}

impl TargetProfile {
    /// The counterpart of `library` on this target, if it has one.
    pub fn counterpart(&self, library: Library) -> Option<&LibraryCounterpart> {
        self.counterparts.iter().find(|c| c.library == library)
    }

    /// Whether CUDA C++ kernels compile on the target as they are.
    pub fn kernels_native(&self) -> bool {
        self.kernels.model == KernelModel::Native
    }

    /// The kernel model `value` of the SIMT flag names (`simt`, or the
    /// flag's default value for the target's own model).
    pub fn kernel_model_named(&self, value: &str) -> Option<KernelModel> {
        let simt = self.kernels.simt.as_ref()?;
        match value {
            "simt" => Some(KernelModel::Simt),
            v if v == simt.default_value => Some(self.kernels.model),
            _ => None,
        }
    }
}

/// One row of `mappings/libraries.toml`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "kebab-case")]
pub struct LibraryProfile {
    pub id: Library,
    pub name: String,
    /// The hundreds digit of the library's rule codes (a family of libraries
    /// shares one: cuFFT, cuRAND, cuSPARSE and cuSOLVER are 5).
    pub code_family: u16,
    #[serde(default)]
    pub camel_prefixes: Vec<String>,
    #[serde(default)]
    pub upper_prefixes: Vec<String>,
    #[serde(default)]
    pub header_stems: Vec<String>,
    /// C++ namespaces whose members belong to the library (`thrust::sort`,
    /// `cudnn_frontend::graph::Graph`).
    #[serde(default)]
    pub namespaces: Vec<String>,
    /// Used only in device code (warp matrix functions, cooperative groups).
    #[serde(default)]
    pub device_only: bool,
    pub shim_header: Option<String>,
    pub cmake_target: Option<String>,
    /// Libraries whose names its CUDA header makes visible (`cublasLt.h`
    /// includes `cublas_api.h`): its shim header includes theirs.
    #[serde(default)]
    pub includes_libraries: Vec<Library>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct LibraryFile {
    library: Vec<LibraryProfile>,
}

/// The helper implementation `name` of `target`
/// (`mappings/<target>/helpers/<name>`, embedded at build time).
pub fn helper_source(target: Target, name: &str) -> Option<&'static str> {
    embedded::HELPER_SOURCES
        .iter()
        .find(|(id, file, _)| *id == target.id() && *file == name)
        .map(|(_, _, text)| *text)
}

/// Every profile, parsed once.
#[derive(Debug)]
pub struct Profiles {
    targets: BTreeMap<Target, TargetProfile>,
    libraries: BTreeMap<Library, LibraryProfile>,
}

/// A built-in profile file that does not parse, or a target or library
/// with no profile: a defect of the build, reported by `Profiles::load`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProfileError(pub String);

impl std::fmt::Display for ProfileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ProfileError {}

impl Profiles {
    /// Parses the embedded files and checks that every [`Target`] and
    /// [`Library`] has exactly one profile and every profile a variant.
    pub fn load() -> Result<Profiles, ProfileError> {
        let mut targets = BTreeMap::new();
        for (id, text) in embedded::TARGET_TOMLS {
            let Some(target) = Target::from_id(id) else {
                return Err(ProfileError(format!(
                    "mappings/{id}/target.toml: no Target variant has the id {id:?}; add one to cuport_model::Target"
                )));
            };
            let profile: TargetProfile = toml::from_str(text)
                .map_err(|e| ProfileError(format!("mappings/{id}/target.toml: {e}")))?;
            targets.insert(target, profile);
        }
        if let Some(missing) = Target::ALL.iter().find(|t| !targets.contains_key(t)) {
            return Err(ProfileError(format!(
                "target {missing} has no mappings/{missing}/target.toml"
            )));
        }
        for (target, profile) in &targets {
            let named = [
                ("helper-source", profile.shim.helper_source.as_ref()),
                ("kernel-operators", profile.shim.kernel_operators.as_ref()),
            ]
            .into_iter()
            .chain(profile.shim.headers.iter().map(|h| ("headers", Some(h))));
            for (key, name) in named {
                if let Some(name) = name {
                    if helper_source(*target, name).is_none() {
                        return Err(ProfileError(format!(
                            "mappings/{target}/target.toml: {key} {name:?} is not in mappings/{target}/helpers/"
                        )));
                    }
                }
            }
        }
        let file: LibraryFile = toml::from_str(embedded::LIBRARIES_TOML)
            .map_err(|e| ProfileError(format!("mappings/libraries.toml: {e}")))?;
        let mut libraries = BTreeMap::new();
        for row in file.library {
            let id = row.id;
            if libraries.insert(id, row).is_some() {
                return Err(ProfileError(format!(
                    "mappings/libraries.toml: library {:?} is listed twice",
                    id.id()
                )));
            }
        }
        if let Some(missing) = Library::ALL.iter().find(|l| !libraries.contains_key(l)) {
            return Err(ProfileError(format!(
                "mappings/libraries.toml: no row for library {:?}",
                missing.id()
            )));
        }
        Ok(Profiles { targets, libraries })
    }

    /// The built-in profiles. They are checked by this crate's tests (and
    /// every CLI test loads them), so a broken file never ships.
    pub fn builtin() -> &'static Profiles {
        static PROFILES: OnceLock<Profiles> = OnceLock::new();
        PROFILES.get_or_init(|| match Profiles::load() {
            Ok(profiles) => profiles,
            Err(error) => {
                panic!("built-in profile data is broken (a cuport build defect): {error}")
            }
        })
    }

    pub fn target(&self, target: Target) -> &TargetProfile {
        &self.targets[&target]
    }

    pub fn library(&self, library: Library) -> &LibraryProfile {
        &self.libraries[&library]
    }

    pub fn libraries(&self) -> impl Iterator<Item = &LibraryProfile> {
        self.libraries.values()
    }
}

impl Target {
    /// This target's profile (`mappings/<id>/target.toml`).
    pub fn profile(self) -> &'static TargetProfile {
        Profiles::builtin().target(self)
    }

    /// `hip, ascend, musa or mlu`: the ids for messages.
    pub fn ids_text() -> String {
        let ids: Vec<&str> = Target::ALL.iter().map(|t| t.id()).collect();
        match ids.split_last() {
            Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
            _ => ids.join(""),
        }
    }
}

impl Library {
    /// This library's row of `mappings/libraries.toml`.
    pub fn profile(self) -> &'static LibraryProfile {
        Profiles::builtin().library(self)
    }

    /// The name NVIDIA (or the project) uses for it.
    pub fn name(self) -> &'static str {
        &self.profile().name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_target_and_library_has_a_profile() {
        let profiles = match Profiles::load() {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        };
        for target in Target::ALL {
            let profile = profiles.target(target);
            assert!(!profile.target.runtime_header.is_empty(), "{target}");
        }
        for library in Library::ALL {
            assert_eq!(profiles.library(library).id, library);
        }
    }

    #[test]
    fn code_digits_are_distinct_and_leave_room_for_cuport_and_users() {
        let mut digits: Vec<u16> = Target::ALL
            .iter()
            .map(|t| t.profile().target.code_digit)
            .collect();
        digits.sort_unstable();
        digits.dedup();
        assert_eq!(digits.len(), Target::ALL.len());
        assert!(digits.iter().all(|d| (1..=8).contains(d)));
    }

    #[test]
    fn ids_text_lists_every_target() {
        let text = Target::ids_text();
        for target in Target::ALL {
            assert!(text.contains(target.id()));
        }
        assert!(text.contains(" or "));
    }
}
