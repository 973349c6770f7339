//! Calls of a function the target has, but not for the argument's type
//! (`[[missing-overload]]` of the target's profile: HIP's atomicAdd takes
//! no bfloat16, and from 5.6 its surf2Dwrite no boundary mode). The rename
//! keeps such a call, and the target's compiler finds no overload; the call
//! is reported where it is. An overload is told by the number of arguments
//! or by the first argument's type, read from the file: a cast to one of
//! the types in the argument, or a variable (or parameter) the file
//! declares with one of them.
use std::collections::BTreeSet;

use cuport_model::{Effort, MissingOverload, OverloadHelper, SdkVersion, SiteKind};

use crate::diagnostic::{codes, Diagnostic, Level};
use crate::edit::{Edit, EditKind};
use crate::options::Mode;
use crate::plan::{FileInput, Planned};
use crate::source_text::{declared_variables, function_regions, region_at, word_at};

pub(super) fn report_missing_overloads(input: &FileInput<'_>, planned: &mut Planned) {
    for &target in input.options.targets() {
        let selected = input.options.sdk_version(target);
        for fact in &target.profile().missing_overloads {
            if from_release(fact.since, selected) {
                let helper = usable_helper(input, fact, selected);
                report_calls(input, fact, helper, planned);
            }
        }
    }
}

/// The fact's helper, in a one-way port (a dual-stack source stays CUDA's)
/// for a release that compiles it.
fn usable_helper<'f>(
    input: &FileInput<'_>,
    fact: &'f MissingOverload,
    selected: Option<SdkVersion>,
) -> Option<&'f OverloadHelper> {
    let helper = fact.helper.as_ref()?;
    let one_way = matches!(input.options.mode, Mode::OneWay(_));
    (one_way && from_release(helper.since, selected)).then_some(helper)
}

/// Whether the selected release (the newest when none is) is `since` or
/// later (every release when there is no `since`).
fn from_release(since: Option<SdkVersion>, selected: Option<SdkVersion>) -> bool {
    match (since, selected) {
        (Some(since), Some(selected)) => selected >= since,
        _ => true,
    }
}

fn report_calls(
    input: &FileInput<'_>,
    fact: &MissingOverload,
    helper: Option<&OverloadHelper>,
    planned: &mut Planned,
) {
    let src = input.src;
    let calls: Vec<&cuport_analyze::Site> = input
        .analysis
        .sites
        .iter()
        .filter(|s| s.call.is_some() && s.name == fact.function)
        .collect();
    if calls.is_empty() {
        return;
    }
    // Declarations are read only for a fact about types (most are about
    // argument counts).
    let typed = if fact.types.is_empty() {
        Vec::new()
    } else {
        variables_of_types(input, &fact.types)
    };
    let regions = if typed.is_empty() {
        Vec::new()
    } else {
        function_regions(src)
    };
    for call in calls {
        // A variable counts where the call's function declares it, or no
        // function does (llm.c declares `addr` as a bfloat16 pointer in one
        // atomicAddX and as a float pointer in the next).
        let function = region_at(&regions, call.range.start);
        let visible: Vec<(&str, String)> = typed
            .iter()
            .filter(|(_, at, _)| {
                let declared_in = region_at(&regions, *at);
                declared_in.is_none() || declared_in == function
            })
            .map(|(name, _, ty)| (*name, ty.clone()))
            .collect();
        let Some(overload) = missing(src, call, fact, &visible) else {
            continue;
        };
        if planned.diagnostics.iter().any(|d| d.range == call.range) {
            continue;
        }
        if let Some(helper) = helper {
            call_the_helper(input, call, (fact, helper), &overload, planned);
            continue;
        }
        planned
            .diagnostics
            .push(reported_call(input, call, fact, &overload));
    }
}

/// CP0044 on the call: what the target lacks and what to write instead.
fn reported_call(
    input: &FileInput<'_>,
    call: &cuport_analyze::Site,
    fact: &MissingOverload,
    overload: &str,
) -> Diagnostic {
    let message = format!(
        "`{}` {overload}: the target declares no such `{}`",
        call.name, call.name
    );
    Diagnostic {
        effort: Some(Effort::Low),
        kind: SiteKind::LibraryCall,
        suggestion: Some(fact.note.clone()),
        reference: Some(fact.reference.clone()),
        ..Diagnostic::on_site(
            call,
            input.lines,
            codes::MISSING_OVERLOAD,
            Level::Manual,
            message,
        )
    }
}

/// Renames the call to the helper, includes the helper's header and says
/// so on the line.
fn call_the_helper(
    input: &FileInput<'_>,
    call: &cuport_analyze::Site,
    (fact, helper): (&MissingOverload, &OverloadHelper),
    overload: &str,
    planned: &mut Planned,
) {
    if planned.overlaps_an_edit(call.range) {
        return;
    }
    planned.edits.push(Edit {
        range: call.range,
        replacement: helper.function.clone(),
        code: codes::OVERLOAD_HELPER,
        cuda_name: call.name.clone(),
        kind: EditKind::Port,
    });
    let header = format!("cuport_{}", helper.header);
    planned.headers.push(format!("\"{header}\""));
    let reported = reported_call(input, call, fact, overload);
    planned.diagnostics.push(Diagnostic {
        code: codes::OVERLOAD_HELPER,
        level: Level::Note,
        effort: None,
        message: format!(
            "{}; it became `{}` ({header}): {}",
            reported.message, helper.function, helper.note
        ),
        suggestion: None,
        ..reported
    });
}

/// How the call is the overload the target lacks (`on `__nv_bfloat16``,
/// `with 5 arguments`), if it is.
fn missing(
    src: &[u8],
    call: &cuport_analyze::Site,
    fact: &MissingOverload,
    typed: &[(&str, String)],
) -> Option<String> {
    if let Some(count) = fact.arguments {
        return (call.args.len() == count).then(|| format!("with {count} arguments"));
    }
    let at = call.args.get(fact.argument.unwrap_or(1).checked_sub(1)?)?;
    let argument = String::from_utf8_lossy(&src[at.start..at.end]);
    let ty = argument_type(&argument, typed, &fact.types)?;
    Some(match fact.argument {
        Some(n) if n > 1 => format!("with a `{ty}` as argument {n}"),
        _ => format!("on `{ty}`"),
    })
}

/// `(variable, where, type)` for each name the file declares with one of
/// `types`.
fn variables_of_types<'s>(
    input: &FileInput<'s>,
    types: &[String],
) -> Vec<(&'s str, usize, String)> {
    // Read from the text, not the sites: a type the target spells as CUDA
    // does (`half2` on HIP) has no rule and so no site.
    let src = input.src;
    let mut out = Vec::new();
    for &(at, word) in input.code_words() {
        let Some(ty) = types.iter().find(|t| t.as_str() == word) else {
            continue;
        };
        for name in declared_variables(src, at + word.len()) {
            let declared_at = name.as_ptr() as usize - src.as_ptr() as usize;
            out.push((name, declared_at, ty.clone()));
        }
    }
    out
}

/// The type of the argument when it is one of `types`: named in it (a
/// cast), or its leading variable's (`&x`, `(p)`, `p + i`).
fn argument_type(argument: &str, typed: &[(&str, String)], types: &[String]) -> Option<String> {
    let words: BTreeSet<&str> = argument
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    if let Some(ty) = types.iter().find(|t| words.contains(t.as_str())) {
        return Some(ty.clone());
    }
    let start = argument
        .bytes()
        .position(|b| !(b.is_ascii_whitespace() || b == b'&' || b == b'('))?;
    let leading = word_at(argument.as_bytes(), start)?;
    typed
        .iter()
        .find(|(name, _)| *name == leading)
        .map(|(_, ty)| ty.clone())
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::REPORT_MISSING_OVERLOADS;

    /// HIP 6.1: before the bfloat16 helper compiles.
    fn hip_6_1() -> MigrateOptions {
        let mut options = MigrateOptions::new(Target::Hip);
        if let Ok(version) = cuport_model::SdkVersion::parse("6.1.0") {
            options.sdk_versions.insert(Target::Hip, version);
        }
        options
    }

    fn reported(src: &str) -> Vec<(u32, String)> {
        reported_with(src, &hip_6_1(), "CP0044")
    }

    fn reported_with(src: &str, options: &MigrateOptions, code: &str) -> Vec<(u32, String)> {
        run_pass(&REPORT_MISSING_OVERLOADS, Language::Cuda, src, options)
            .diagnostics
            .iter()
            .filter(|d| d.code == code)
            .map(|d| (d.line, d.message.clone()))
            .collect()
    }

    #[test]
    fn atomic_add_on_bfloat16_becomes_the_helper_from_hip_6_2_in_one_way_ports() {
        let src = "__device__ void add(__nv_bfloat16* addr, __nv_bfloat16 v, float* f) {\n\
                   \x20 atomicAdd(addr, v);\n  atomicAdd(f, 1.0f);\n}\n";
        let newest = MigrateOptions::new(Target::Hip);
        let planned = run_pass(&REPORT_MISSING_OVERLOADS, Language::Cuda, src, &newest);
        let renamed: Vec<&str> = planned
            .edits
            .iter()
            .map(|e| e.replacement.as_str())
            .collect();
        assert_eq!(renamed, ["cuport_atomicAdd"]);
        assert_eq!(planned.headers, ["\"cuport_atomic_half.h\""]);
        assert_eq!(reported_with(src, &newest, "CP0045").len(), 1);
        assert!(reported_with(src, &newest, "CP0044").is_empty());
        let dual = MigrateOptions::dual_stack(vec![Target::Hip]);
        let kept = run_pass(&REPORT_MISSING_OVERLOADS, Language::Cuda, src, &dual);
        assert!(kept.edits.is_empty(), "{:?}", kept.edits);
        assert_eq!(reported_with(src, &dual, "CP0044").len(), 1);
        assert_eq!(reported(src).len(), 1);
    }

    #[test]
    fn atomic_add_on_a_bfloat16_pointer_or_cast_is_reported() {
        let src = "#include <cuda_bf16.h>\n\
                   __device__ void add(__nv_bfloat16* addr, __nv_bfloat16 v, float* f) {\n\
                   \x20 __nv_bfloat162* pair = reinterpret_cast<__nv_bfloat162*>(addr);\n\
                   \x20 atomicAdd(pair, __halves2bfloat162(v, v));\n\
                   \x20 atomicAdd(addr, v);\n\
                   \x20 atomicAdd((__nv_bfloat16*)f, v);\n\
                   \x20 atomicAdd(f, 1.0f);\n\
                   \x20 int n = 0;\n  atomicAdd(&n, 1);\n}\n";
        let lines: Vec<u32> = reported(src).into_iter().map(|(line, _)| line).collect();
        assert_eq!(lines, [4, 5, 6]);
        assert!(reported(src)[0].1.contains("`__nv_bfloat162`"));
    }

    #[test]
    fn a_variable_of_another_function_does_not_count() {
        let src =
            "__device__ void x(__nv_bfloat16* addr, __nv_bfloat16 v) { atomicAdd(addr, v); }\n\
                   __device__ void x(float* addr, float v) {\n  atomicAdd(addr, v);\n}\n";
        let lines: Vec<u32> = reported(src).into_iter().map(|(line, _)| line).collect();
        assert_eq!(lines, [1]);
    }

    #[test]
    fn other_targets_and_other_types_get_nothing() {
        let src = "__device__ void add(float* f, __half* h) { atomicAdd(f, 1.0f); atomicAdd(h, __half(1)); }\n";
        assert!(reported(src).is_empty());
        let options = MigrateOptions::new(Target::Musa);
        let bf = "__device__ void add(__nv_bfloat16* p, __nv_bfloat16 v) { atomicAdd(p, v); }\n";
        let planned = run_pass(&REPORT_MISSING_OVERLOADS, Language::Cuda, bf, &options);
        assert!(planned.diagnostics.is_empty(), "{:?}", planned.diagnostics);
    }

    #[test]
    fn a_surface_write_with_a_boundary_mode_is_reported_from_hip_5_6() {
        let src = "__global__ void k(cudaSurfaceObject_t s, float v) {\n\
                   \x20 surf2Dwrite(v, s, 0, 0, cudaBoundaryModeTrap);\n\
                   \x20 surf2Dwrite(v, s, 4, 0);\n}\n";
        let with_mode = |version: &str| {
            let mut options = MigrateOptions::new(Target::Hip);
            if let Ok(version) = cuport_model::SdkVersion::parse(version) {
                options.sdk_versions.insert(Target::Hip, version);
            }
            run_pass(&REPORT_MISSING_OVERLOADS, Language::Cuda, src, &options)
                .diagnostics
                .iter()
                .map(|d| (d.line, d.message.clone()))
                .collect::<Vec<_>>()
        };
        let newer = with_mode("6.4.3");
        assert_eq!(newer.len(), 1, "{newer:?}");
        assert_eq!(newer[0].0, 2);
        assert!(newer[0].1.contains("with 5 arguments"), "{newer:?}");
        assert!(with_mode("5.2.3").is_empty());
        assert_eq!(reported(src).len(), 1);
    }

    #[test]
    fn cuda_13s_mem_advise_with_a_location_is_reported() {
        let src = "void f(int* p, size_t n, int device) {\n\
                   \x20 cudaMemLocation where;\n\
                   \x20 where.type = cudaMemLocationTypeDevice;\n\
                   \x20 cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, where);\n\
                   \x20 cudaMemAdvise(p, n, cudaMemAdviseSetReadMostly, device);\n}\n";
        let lines: Vec<u32> = reported(src).into_iter().map(|(line, _)| line).collect();
        assert_eq!(lines, [4]);
    }
}
