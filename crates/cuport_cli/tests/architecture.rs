//! The workspace's shape, checked: inside each crate the modules (files)
//! form a pipeline with no import circles, and in cuport_rewrite only the
//! crate root and the one dispatcher (`mode.rs`) know dual-stack mode.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn crates_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `dual::c` for `src/dual/c.rs`, `dual` for `src/dual/mod.rs` or
/// `src/dual.rs`, `` for the crate root.
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a file without comments and without its inline test module
/// (whose `super::` means the file itself).
fn code_of(text: &str) -> String {
    let text = text.split("#[cfg(test)]").next().unwrap_or(text);
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .filter(|l| {
            let t = l.trim_start();
            !(t.starts_with("mod ")
                || t.starts_with("pub mod ")
                || t.starts_with("pub(crate) mod "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Paths named after `crate::` or `super::` (`super` resolved against
/// `module`), as `a::b::c`.
fn referenced_paths(code: &str, module: &str) -> Vec<String> {
    let mut paths = Vec::new();
    for (prefix, base) in [("crate::", String::new()), ("super::", parent(module))] {
        let mut rest = code;
        while let Some(at) = rest.find(prefix) {
            let before = rest[..at].chars().last();
            rest = &rest[at + prefix.len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let path: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            let path = path.trim_end_matches(':');
            let full = if base.is_empty() {
                path.to_owned()
            } else {
                format!("{base}::{path}")
            };
            paths.push(full);
        }
    }
    paths
}

fn parent(module: &str) -> String {
    module
        .rsplit_once("::")
        .map_or(String::new(), |(p, _)| p.to_owned())
}

/// The module file a path lands in: its longest prefix that is a module.
fn resolve<'m>(path: &str, modules: &'m BTreeSet<String>) -> Option<&'m String> {
    let mut candidate = path.to_owned();
    loop {
        if let Some(m) = modules.get(&candidate) {
            return Some(m);
        }
        let (shorter, _) = candidate.rsplit_once("::")?;
        candidate = shorter.to_owned();
    }
}

/// Module → the modules its code imports (crate root left out: it only
/// declares and re-exports).
fn import_graph(krate: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = crates_dir().join(krate).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut graph = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        if module.is_empty() {
            continue;
        }
        let code = code_of(&std::fs::read_to_string(file).unwrap());
        let targets: BTreeSet<String> = referenced_paths(&code, &module)
            .iter()
            .filter_map(|p| resolve(p, &modules))
            .filter(|m| !m.is_empty() && **m != module)
            .cloned()
            .collect();
        graph.insert(module, targets);
    }
    graph
}

/// One import circle of the graph, if there is one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        stack: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = stack.iter().position(|n| n == node) {
            let mut cycle = stack[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        stack.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, stack, done) {
                return Some(cycle);
            }
        }
        stack.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph
        .keys()
        .find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn no_crate_has_an_import_circle_between_its_files() {
    let mut circles = Vec::new();
    for entry in std::fs::read_dir(crates_dir()).unwrap().flatten() {
        if !entry.path().join("src").is_dir() {
            continue;
        }
        let krate = entry.file_name().to_string_lossy().into_owned();
        if let Some(cycle) = find_cycle(&import_graph(&krate)) {
            circles.push(format!("{krate}: {}", cycle.join(" -> ")));
        }
    }
    assert!(
        circles.is_empty(),
        "import circles:\n{}",
        circles.join("\n")
    );
}

#[test]
fn only_the_dispatcher_knows_dual_stack_mode() {
    let graph = import_graph("cuport_rewrite");
    let knowing: Vec<&String> = graph
        .iter()
        .filter(|(module, imports)| {
            !module.starts_with("dual") && imports.iter().any(|i| i.starts_with("dual"))
        })
        .map(|(module, _)| module)
        .collect();
    assert_eq!(
        knowing,
        ["mode"],
        "modules outside dual/ that import dual::"
    );
}

#[test]
fn the_checker_sees_circles_and_super_paths() {
    let graph: BTreeMap<String, BTreeSet<String>> =
        [("a", vec!["b"]), ("b", vec!["c"]), ("c", vec!["a"])]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.into_iter().map(str::to_owned).collect()))
            .collect();
    assert!(find_cycle(&graph).is_some());
    let code = "use super::names::x; use crate::plan::Planner; let y = my_crate::z;";
    assert_eq!(
        referenced_paths(code, "dual::c"),
        ["plan::Planner", "dual::names::x"]
    );
}
