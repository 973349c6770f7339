//! CMake files in dual-stack mode: the project's own build goes through the
//! generated `cuport/cuport.cmake`, so one CMakeLists builds every backend.
//!
//! - `project(... CUDA)` loses `CUDA`; right after it the module is included
//!   and `cuport_enable_language()` enables CUDA (or HIP) where the backend
//!   compiles kernels.
//! - `enable_language(CUDA)` becomes `cuport_enable_language()`.
//! - `find_package(CUDAToolkit ...)` runs only for the CUDA backend.
//! - `CUDA::` link items leave `target_link_libraries`, and
//!   `cuport_target(<target>)` after the call links the backend's libraries.
//!
//! Other CUDA spellings (`CMAKE_CUDA_*`, properties, generator expressions)
//! are harmless where CUDA is not enabled and stay, with their diagnostics.
use cuport_analyze::Site;
use cuport_model::TextRange;

use super::state::DualPlanner;
use crate::diagnostic::codes;

/// Whether the dual build rewrite takes care of `site` on every backend.
pub(crate) fn handles(name: &str) -> bool {
    matches!(
        name,
        "project(CUDA)" | "enable_language(CUDA)" | "find_package(CUDAToolkit)"
    ) || name.starts_with("CUDA::")
}

/// Rewrites one CMake site; false when it is not one of the handled forms.
pub(crate) fn plan_site(planner: &mut DualPlanner<'_>, site: &Site) -> bool {
    let name = site.name.as_str();
    if name == "project(CUDA)" {
        project_languages(planner, site)
    } else if name == "enable_language(CUDA)" {
        enable_language(planner, site)
    } else if name == "find_package(CUDAToolkit)" {
        find_package(planner, site)
    } else if name.starts_with("CUDA::") {
        link_item(planner, site)
    } else {
        false
    }
}

fn module_path(planner: &DualPlanner<'_>) -> String {
    format!(
        "${{CMAKE_CURRENT_LIST_DIR}}/{}cuport/cuport.cmake",
        planner.prefix
    )
}

/// The command call around `at`: from the command name's start to just
/// after its closing parenthesis.
fn enclosing_call(planner: &DualPlanner<'_>, at: usize, command: &str) -> Option<TextRange> {
    let src = planner.src;
    let before = std::str::from_utf8(&src[..at]).ok()?;
    let lowered = before.to_ascii_lowercase();
    let start = lowered.rfind(&format!("{command}("))?;
    // A word in another command's arguments is no command (a fuzzing
    // finding: `fuzz_regressions::a_command_name_inside_arguments_is_not_rewritten`).
    if !cuport_analyze::is_cmake_command_at(src, start) {
        return None;
    }
    // As CMake reads it: not a `)` inside a quoted argument or a `#` comment
    // (a fuzzing finding: `fuzz_regressions::cmake_call_left_open_is_not_closed_by_a_comment`).
    let close = cuport_analyze::cmake_closing_paren(src, start + command.len() + 1)?;
    (close >= at).then(|| TextRange::new(start, close + 1))
}

fn edit(planner: &mut DualPlanner<'_>, range: TextRange, text: String, site: &Site) {
    planner.edit(range, text, codes::DUAL_PORTABLE, &site.name);
}

/// `range` widened over the blanks before it (and line breaks, with
/// `lines`), so removing a word leaves no gap behind.
fn with_blanks_before(planner: &DualPlanner<'_>, range: TextRange, lines: bool) -> TextRange {
    let blanks = planner.src[..range.start]
        .iter()
        .rev()
        .take_while(|b| **b == b' ' || **b == b'\t' || (lines && b.is_ascii_whitespace()))
        .count();
    TextRange::new(range.start - blanks, range.end)
}

/// The leading whitespace of the line holding `at`, so inserted lines
/// line up with the call they follow.
fn indent_at(planner: &DualPlanner<'_>, at: usize) -> String {
    let line_start = planner.src[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    planner.src[line_start..at]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .map(|&b| b as char)
        .collect()
}

/// `project(demo LANGUAGES CXX CUDA)` → `project(demo LANGUAGES CXX)` plus
/// the module and the backend's language right after it.
fn project_languages(planner: &mut DualPlanner<'_>, site: &Site) -> bool {
    let Some(call) = enclosing_call(planner, site.range.start, "project") else {
        return false;
    };
    let inside = planner.text(TextRange::new(call.start, call.end));
    let other_language = ["CXX", " C ", " C)", "Fortran"]
        .iter()
        .any(|l| inside.contains(l));
    // Without another language, CUDA's place goes to C++ (host code).
    let (range, replacement) = if other_language {
        (
            with_blanks_before(planner, site.range, false),
            String::new(),
        )
    } else {
        (site.range, "CXX".to_owned())
    };
    edit(planner, range, replacement, site);
    let indent = indent_at(planner, call.start);
    let include = format!(
        "\n{indent}include(\"{}\")\n{indent}cuport_enable_language()",
        module_path(planner)
    );
    edit(planner, TextRange::new(call.end, call.end), include, site);
    true
}

fn enable_language(planner: &mut DualPlanner<'_>, site: &Site) -> bool {
    let Some(call) = enclosing_call(planner, site.range.start, "enable_language") else {
        return false;
    };
    let indent = indent_at(planner, call.start);
    let text = format!(
        "include(\"{}\")\n{indent}cuport_enable_language()",
        module_path(planner)
    );
    edit(planner, call, text, site);
    true
}

fn find_package(planner: &mut DualPlanner<'_>, site: &Site) -> bool {
    let Some(call) = enclosing_call(planner, site.range.start, "find_package") else {
        return false;
    };
    let line_before = planner.src[..call.start]
        .rsplit(|&b| b == b'\n')
        .nth(1)
        .map(|l| String::from_utf8_lossy(l).trim().to_owned());
    if line_before.as_deref() == Some("if(CUPORT_BACKEND_ID STREQUAL \"CUDA\")") {
        // Already guarded by an earlier run.
        return true;
    }
    let original = planner.text(call).to_owned();
    let indent = indent_at(planner, call.start);
    let text = format!(
        "include(\"{}\")\n{indent}if(CUPORT_BACKEND_ID STREQUAL \"CUDA\")\n{indent}  {original}\n{indent}endif()",
        module_path(planner)
    );
    edit(planner, call, text, site);
    true
}

/// Removes a `CUDA::` item from `target_link_libraries` and, once per call,
/// adds `cuport_target(<target>)` after it.
fn link_item(planner: &mut DualPlanner<'_>, site: &Site) -> bool {
    let Some(call) = enclosing_call(planner, site.range.start, "target_link_libraries") else {
        return false;
    };
    let inside = planner.text(TextRange::new(call.start, call.end));
    let Some(target) = inside
        .split_once('(')
        .and_then(|(_, args)| args.split_whitespace().next())
        .map(|t| t.trim_end_matches(')').to_owned())
    else {
        return false;
    };
    let item = with_blanks_before(planner, site.range, true);
    edit(planner, item, String::new(), site);
    let already = planner
        .out
        .edits
        .iter()
        .any(|e| e.range.start == call.end && e.replacement.contains("cuport_target("));
    if !already {
        let indent = indent_at(planner, call.start);
        let text = format!(
            "\n{indent}include(\"{}\")\n{indent}cuport_target({target})",
            module_path(planner)
        );
        edit(planner, TextRange::new(call.end, call.end), text, site);
    }
    true
}
