//! The passes that run on a file after its sites are planned: each reads the
//! source and the plan and adds edits, headers or diagnostics the per-site
//! rules cannot decide alone (a cast an argument needs, a guard around a
//! definition the target already has, a limit a kernel may exceed).
//!
//! The lists are the order passes run in; `crate::mode` picks the list for
//! the run's mode, and `crate::file` runs it without asking which it is.
//! To add a pass: a module here with one entry function, an entry in each
//! list it belongs to, and tests in its module (`testing` runs one pass on
//! a source).
use cuport_model::Language;

use crate::plan::{FileInput, Planned};

mod calls;
mod coordinate_casts;
mod device_runtime;
mod dim3_initialisers;
mod effort;
mod host_min_max;
mod implicit_std_headers;
mod initialised_arrays;
mod integer_handles;
mod member_versions;
mod missing_overloads;
mod mixed_sign_min_max;
mod register_storage;
mod retyped_handles;
mod simt_build;
mod simt_limits;
mod target_provided;
#[cfg(test)]
mod testing;

/// One post-plan pass.
pub(crate) struct Pass {
    /// What it is called (the list's tests check each is listed once).
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) name: &'static str,
    /// The languages it reads; files in others pass it by.
    languages: &'static [Language],
    run: fn(&FileInput<'_>, &mut Planned),
}

impl Pass {
    pub(crate) fn run(&self, input: &FileInput<'_>, planned: &mut Planned) {
        if self.languages.contains(&input.language) {
            (self.run)(input, planned);
        }
    }
}

const EVERY_LANGUAGE: &[Language] = &Language::ALL;
const C_FAMILY: &[Language] = &[Language::Cuda, Language::Cpp];
const CMAKE: &[Language] = &[Language::Cmake];

const FOLD_KERNEL_EFFORT: Pass = Pass {
    name: "fold-kernel-effort",
    languages: EVERY_LANGUAGE,
    run: effort::fold_effort_into_kernels,
};

const FOLD_DEVICE_FUNCTION_EFFORT: Pass = Pass {
    name: "fold-device-function-effort",
    languages: EVERY_LANGUAGE,
    run: effort::fold_effort_into_device_functions,
};

const GUARD_TARGET_PROVIDED: Pass = Pass {
    name: "guard-target-provided",
    languages: EVERY_LANGUAGE,
    run: target_provided::guard_target_provided,
};

const CAST_COORDINATE_ARGUMENTS: Pass = Pass {
    name: "cast-coordinate-arguments",
    languages: C_FAMILY,
    run: coordinate_casts::cast_coordinate_arguments,
};

const CAST_MIXED_SIGN_ARGUMENTS: Pass = Pass {
    name: "cast-mixed-sign-arguments",
    languages: C_FAMILY,
    run: mixed_sign_min_max::cast_mixed_sign_arguments,
};

const CONSTRUCT_DIM3: Pass = Pass {
    name: "construct-dim3",
    languages: C_FAMILY,
    run: dim3_initialisers::construct_dim3_from_values,
};

const REPORT_RETYPED_ARGUMENTS: Pass = Pass {
    name: "report-retyped-arguments",
    languages: C_FAMILY,
    run: retyped_handles::report_retyped_arguments,
};

const REPORT_MEMBERS_TOO_NEW: Pass = Pass {
    name: "report-members-too-new",
    languages: C_FAMILY,
    run: member_versions::report_members_too_new,
};

const REPORT_INTEGER_HANDLES: Pass = Pass {
    name: "report-integer-handles",
    languages: C_FAMILY,
    run: integer_handles::report_integer_handles,
};

const REPORT_MISSING_OVERLOADS: Pass = Pass {
    name: "report-missing-overloads",
    languages: C_FAMILY,
    run: missing_overloads::report_missing_overloads,
};

const REPORT_DEVICE_RUNTIME: Pass = Pass {
    name: "report-device-runtime",
    languages: C_FAMILY,
    run: device_runtime::report_device_runtime,
};

const REPORT_INITIALISED_VLAS: Pass = Pass {
    name: "report-initialised-vlas",
    languages: C_FAMILY,
    run: initialised_arrays::report_initialised_vlas,
};

const REPORT_SIMT_LIMITS: Pass = Pass {
    name: "report-simt-limits",
    languages: C_FAMILY,
    run: simt_limits::report_simt_limits,
};

const ADD_SIMT_CMAKE_PRELUDE: Pass = Pass {
    name: "add-simt-cmake-prelude",
    languages: CMAKE,
    run: simt_build::add_simt_cmake_prelude,
};

const PORT_HOST_MIN_MAX: Pass = Pass {
    name: "port-host-min-max",
    languages: C_FAMILY,
    run: host_min_max::port_host_min_max,
};

const ADD_IMPLICIT_STD_HEADERS: Pass = Pass {
    name: "add-implicit-std-headers",
    languages: C_FAMILY,
    run: implicit_std_headers::add_implicit_std_headers,
};

const REMOVE_REGISTER_STORAGE_CLASS: Pass = Pass {
    name: "remove-register-storage-class",
    languages: C_FAMILY,
    run: register_storage::remove_register_storage_class,
};

/// A one-way port's passes, in order.
pub(crate) const ONE_WAY: &[Pass] = &[
    FOLD_KERNEL_EFFORT,
    FOLD_DEVICE_FUNCTION_EFFORT,
    GUARD_TARGET_PROVIDED,
    CAST_COORDINATE_ARGUMENTS,
    CAST_MIXED_SIGN_ARGUMENTS,
    CONSTRUCT_DIM3,
    REPORT_RETYPED_ARGUMENTS,
    REPORT_MEMBERS_TOO_NEW,
    REPORT_INTEGER_HANDLES,
    REPORT_MISSING_OVERLOADS,
    REPORT_DEVICE_RUNTIME,
    REPORT_INITIALISED_VLAS,
    REPORT_SIMT_LIMITS,
    ADD_SIMT_CMAKE_PRELUDE,
    PORT_HOST_MIN_MAX,
    ADD_IMPLICIT_STD_HEADERS,
    REMOVE_REGISTER_STORAGE_CLASS,
];

/// A dual-stack source's passes, in order: member versions, the SIMT
/// build prelude and C headers belong to one target's port (the shim and
/// the generated CMake carry them for dual-stack builds).
pub(crate) const DUAL: &[Pass] = &[
    FOLD_KERNEL_EFFORT,
    GUARD_TARGET_PROVIDED,
    CAST_COORDINATE_ARGUMENTS,
    CAST_MIXED_SIGN_ARGUMENTS,
    CONSTRUCT_DIM3,
    REPORT_RETYPED_ARGUMENTS,
    REPORT_INTEGER_HANDLES,
    REPORT_MISSING_OVERLOADS,
    REPORT_DEVICE_RUNTIME,
    REPORT_INITIALISED_VLAS,
    REPORT_SIMT_LIMITS,
];

#[cfg(test)]
mod tests {
    use super::*;

    fn names(passes: &[Pass]) -> Vec<&'static str> {
        passes.iter().map(|p| p.name).collect()
    }

    #[test]
    fn each_pass_is_listed_once_and_dual_keeps_the_one_way_order() {
        let one_way = names(ONE_WAY);
        let mut unique = one_way.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), one_way.len(), "{one_way:?}");
        let positions: Vec<usize> = names(DUAL)
            .iter()
            .map(|name| one_way.iter().position(|n| n == name).expect("in ONE_WAY"))
            .collect();
        assert!(positions.windows(2).all(|w| w[0] < w[1]), "{positions:?}");
    }
}
