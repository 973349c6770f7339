//! CUDA's host `max` and `min`. nvcc declares them for a `.cu` file's host
//! code too (`static inline __host__ __device__` in its math headers), so a
//! project may write `max(3 * C, Vp)` outside any kernel (llm.c). Where the
//! target's host compiler has none (`[host-min-max]` of its profile), each
//! such call becomes the profile's helper, from a header-only helper the
//! port writes. Device code is left to the kernel port; a file that defines
//! its own `max` or `min` keeps its calls.
use cuport_model::{Language, Library, SiteKind, Target, TextRange};

use super::calls::{host_calls, HostDevice};
use crate::diagnostic::{codes, Diagnostic, Level};
use crate::edit::{Edit, EditKind};
use crate::options::Mode;
use crate::plan::{FileInput, Planned};

pub(super) fn port_host_min_max(input: &FileInput<'_>, planned: &mut Planned) {
    let Mode::OneWay(target) = input.options.mode else {
        return;
    };
    let facts = &target.profile().host_min_max;
    let Some(header) = facts.header.as_deref() else {
        return;
    };
    if input.language != Language::Cuda || facts.helpers.is_empty() {
        return;
    }
    let calls = host_calls(input, HostDevice::Device, |w| facts.helpers.contains_key(w));
    if calls.is_empty() {
        return;
    }
    for (range, name) in calls {
        let overlaps = planned.overlaps_an_edit(range);
        let Some(helper) = facts.helpers.get(name).filter(|_| !overlaps) else {
            continue;
        };
        planned.edits.push(Edit {
            range,
            replacement: helper.clone(),
            code: codes::HOST_MIN_MAX,
            cuda_name: name.to_owned(),
            kind: EditKind::Port,
        });
        planned
            .diagnostics
            .push(diagnostic(input, target, range, name, helper, header));
    }
    planned.headers.push(format!("\"{header}\""));
}

fn diagnostic(
    input: &FileInput<'_>,
    target: Target,
    range: TextRange,
    name: &str,
    helper: &str,
    header: &str,
) -> Diagnostic {
    let at = input.lines.line_col(range.start);
    Diagnostic {
        code: codes::HOST_MIN_MAX,
        level: Level::Note,
        effort: None,
        message: format!(
            "`{name}` here is CUDA's host `{name}` (nvcc's math headers), which {target}'s host compiler does not have; it became `{helper}` ({header}), which compares in the arguments' common type as CUDA's overloads do"
        ),
        line: at.line,
        column: at.column,
        range,
        cuda_name: name.to_owned(),
        library: Library::Device,
        kind: SiteKind::DeviceIntrinsic,
        suggestion: Some(format!(
            "where both arguments have one type, `std::{name}` (<algorithm>) says the same"
        )),
        reference: target.profile().host_min_max.reference.clone(),
    }
}

#[cfg(test)]
mod tests {
    use cuport_model::{Language, Target};

    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    const SRC: &str = "#include <cuda_runtime.h>\n__global__ void k(int* x) { x[0] = max(x[0], 1); }\nsize_t sizes(size_t C, size_t T, size_t Vp) {\n    return T * max(3 * C, max(T, Vp)) + min(C, T) + std::max(C, T);\n}\n";

    #[test]
    fn host_max_and_min_become_helpers_on_ascend_only() {
        let ascend = run_pass(
            &PORT_HOST_MIN_MAX,
            Language::Cuda,
            SRC,
            &MigrateOptions::new(Target::Ascend),
        );
        let renamed: Vec<(&str, &str)> = ascend
            .edits
            .iter()
            .map(|e| (&SRC[e.range.start..e.range.end], e.replacement.as_str()))
            .collect();
        assert_eq!(
            renamed,
            [
                ("max", "cuport_max"),
                ("max", "cuport_max"),
                ("min", "cuport_min")
            ]
        );
        assert_eq!(ascend.headers, ["\"cuport_host_math.h\""]);
        for options in [
            MigrateOptions::new(Target::Hip),
            MigrateOptions::dual_stack(vec![Target::Ascend]),
        ] {
            let other = run_pass(&PORT_HOST_MIN_MAX, Language::Cuda, SRC, &options);
            assert!(other.edits.is_empty(), "{:?}", other.edits);
        }
    }

    #[test]
    fn a_file_with_its_own_max_keeps_its_calls() {
        for own in [
            "#define max(a, b) ((a) > (b) ? (a) : (b))\n",
            "static int max(int a, int b) { return a > b ? a : b; }\n",
        ] {
            let src = format!("{own}{SRC}");
            let ascend = run_pass(
                &PORT_HOST_MIN_MAX,
                Language::Cuda,
                &src,
                &MigrateOptions::new(Target::Ascend),
            );
            assert!(ascend.edits.is_empty(), "{own}: {:?}", ascend.edits);
        }
    }
}
