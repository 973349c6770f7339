//! Where the generated modules go. A rewritten file says `import
//! cuport_device`, which Python resolves on `sys.path`:
//!
//! * `python dir/script.py` puts `dir/` first on `sys.path`, so a script
//!   needs the module beside it;
//! * a module inside a package (`pkg/sub/mod.py`, imported as
//!   `pkg.sub.mod`) is found through the directory holding the top-level
//!   package, so the module goes there (the first ancestor without an
//!   `__init__.py`);
//! * `python -m tools.x` from the root puts the root first, so the root
//!   always gets a copy too.
//!
//! Every copy is the same generated text. An installed package (`pip
//! install .`) carries the module only if its setup lists it: cuport does
//! not edit packaging metadata.
use std::collections::BTreeSet;

use cuport_model::{Language, Target};
use cuport_rules::RuleSet;

use super::{build_module, device_module};
use crate::result::{GeneratedFile, MigratedFile};

/// The directory (relative, `/`-separated, `""` for the root) from which
/// `import cuport_device` in the file at `path` resolves.
pub(crate) fn module_dir(path: &str, is_package: &dyn Fn(&str) -> bool) -> String {
    let mut dir = parent(path);
    while !dir.is_empty() && is_package(dir) {
        dir = parent(dir);
    }
    dir.to_owned()
}

fn parent(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(dir, _)| dir)
}

fn imports(output: &[u8], module: &str) -> bool {
    let line = format!("import {module}");
    String::from_utf8_lossy(output)
        .lines()
        .any(|l| l.trim() == line)
}

/// `cuport_device.py` and `cuport_build.py` for a dual run, wherever a
/// rewritten Python file imports them (see the module docs).
/// `is_package(dir)` says whether `dir` (relative to the root) holds an
/// `__init__.py`.
pub(crate) fn python_generated_files(
    files: &[MigratedFile],
    rules: &RuleSet,
    targets: &[Target],
    is_package: &dyn Fn(&str) -> bool,
) -> Vec<GeneratedFile> {
    let mut wanted: BTreeSet<(String, &str)> = BTreeSet::new();
    let python = files.iter().filter(|f| f.language == Language::Python);
    // Unchanged files count too: on a second run the scripts already import
    // the modules, which must still be written.
    for file in python {
        for module in ["cuport_device", "cuport_build"] {
            if imports(&file.result.output, module) {
                wanted.insert((module_dir(&file.path, is_package), module));
                wanted.insert((String::new(), module));
            }
        }
    }
    let device = wanted.iter().any(|(_, m)| *m == "cuport_device");
    let build = wanted.iter().any(|(_, m)| *m == "cuport_build");
    let device_text = device.then(|| device_module(rules, targets));
    let build_text = build.then(|| build_module(rules, targets));
    wanted
        .into_iter()
        .filter_map(|(dir, module)| {
            let text = match module {
                "cuport_device" => device_text.clone()?,
                _ => build_text.clone()?,
            };
            let path = if dir.is_empty() {
                format!("{module}.py")
            } else {
                format!("{dir}/{module}.py")
            };
            Some(GeneratedFile { path, text })
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn scripts_get_the_module_beside_them_and_packages_above_their_top() {
        let packages = ["src/pkg", "src/pkg/sub"];
        let is_package = |dir: &str| packages.contains(&dir);
        assert_eq!(module_dir("train.py", &is_package), "");
        assert_eq!(module_dir("tools/run.py", &is_package), "tools");
        assert_eq!(module_dir("src/pkg/sub/mod.py", &is_package), "src");
        assert_eq!(module_dir("src/pkg/__init__.py", &is_package), "src");
    }

    #[test]
    fn only_imports_on_their_own_line_count() {
        assert!(imports(
            b"import torch\nimport cuport_device\n",
            "cuport_device"
        ));
        assert!(!imports(b"import cuport_device_extra\n", "cuport_device"));
        assert!(!imports(b"# import cuport_build later\n", "cuport_build"));
    }
}
