//! The CMake lines a SIMT build needs before `project()`: CANN's ASC
//! language comes from `find_package(ASC)`, which must run before the
//! language is enabled, and reads `CMAKE_ASC_ENABLE_SIMT` and
//! `CMAKE_ASC_ARCHITECTURES` when it is (`[kernels.simt.cmake]` of the
//! target profile; asc-devkit v9.1.0.pre CMakeASCInformation.cmake). Added once
//! per CMake file, above the command whose CUDA language the port turned
//! into the model's.
use cuport_model::{KernelModel, SiteKind, TextRange};

use crate::diagnostic::codes;
use crate::edit::{Edit, EditKind};
use crate::headers::line_ending;
use crate::options::Mode;
use crate::plan::{FileInput, Planned};

/// Commands whose CUDA language argument the SIMT tables rename.
const LANGUAGE_COMMANDS: &[&str] = &["project(CUDA)", "enable_language(CUDA)"];

pub(super) fn add_simt_cmake_prelude(input: &FileInput<'_>, planned: &mut Planned) {
    let (src, lines, analysis, options) = (input.src, input.lines, input.analysis, input.options);
    let Mode::OneWay(target) = options.mode else {
        return;
    };
    if options.kernel_model(target) != KernelModel::Simt {
        return;
    }
    let Some(simt) = target.profile().kernels.simt.as_ref() else {
        return;
    };
    let package = simt
        .cmake
        .before_project
        .iter()
        .find(|l| l.starts_with("find_package("))
        .map(|l| l.trim_end_matches(" REQUIRED)").trim_end_matches(')'));
    if package.is_some_and(|p| memchr::memmem::find(src, p.as_bytes()).is_some()) {
        return;
    }
    let renamed = analysis.sites.iter().find(|s| {
        s.kind == SiteKind::BuildRule
            && LANGUAGE_COMMANDS.contains(&s.name.as_str())
            && planned.edits.iter().any(|e| e.range == s.range)
    });
    let Some(site) = renamed else {
        return;
    };
    let Some(command) = command_start(src, site.range.start) else {
        return;
    };
    let line = lines
        .line_range(lines.line_of(command))
        .map_or(command, |r| r.start);
    let indent: String = src[line..command]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .map(|&b| char::from(b))
        .collect();
    let newline = line_ending(src);
    // The architecture too: the language module turns it into --npu-arch
    // when project() loads it, so a setting after project() comes too late.
    let cmake = &simt.cmake;
    let architecture = format!(
        "set({} {})",
        cmake.architectures_variable, cmake.architectures
    );
    let text: String = std::iter::once(&architecture)
        .chain(&cmake.before_project)
        .map(|l| format!("{indent}{l}{newline}"))
        .collect();
    planned.edits.push(Edit {
        range: TextRange::new(line, line),
        replacement: text,
        code: codes::SIMT_BUILD,
        cuda_name: site.name.clone(),
        kind: EditKind::Port,
    });
}

/// Where the command whose argument is at `argument` starts: the last
/// `project`/`enable_language` word before it (case-insensitive, as CMake
/// reads command names).
fn command_start(src: &[u8], argument: usize) -> Option<usize> {
    let before = src[..argument].to_ascii_lowercase();
    ["project", "enable_language"]
        .iter()
        .filter_map(|word| memchr::memmem::rfind(&before, word.as_bytes()))
        .max()
}

#[cfg(test)]
mod tests {
    use cuport_model::KernelModel;
    use cuport_model::{Language, Target};

    use crate::options::MigrateOptions;
    use crate::passes::testing::run_pass;
    use crate::passes::*;

    #[test]
    fn the_simt_prelude_goes_before_project_once() {
        let src = "cmake_minimum_required(VERSION 3.18)\nproject(p LANGUAGES CXX CUDA)\nadd_executable(p main.cu)\n";
        let mut simt = MigrateOptions::new(Target::Ascend);
        simt.kernel_models.insert(Target::Ascend, KernelModel::Simt);
        let added = run_pass(&ADD_SIMT_CMAKE_PRELUDE, Language::Cmake, src, &simt);
        let text: String = added.edits.iter().map(|e| e.replacement.as_str()).collect();
        assert!(text.contains("find_package(ASC"), "{text}");
        assert_eq!(text.matches("find_package(ASC").count(), 1, "{text}");
        let vector = run_pass(
            &ADD_SIMT_CMAKE_PRELUDE,
            Language::Cmake,
            src,
            &MigrateOptions::new(Target::Ascend),
        );
        assert!(vector.edits.is_empty(), "{:?}", vector.edits);
    }
}
