//! The workspace's shape, checked: inside each crate the modules (files)
//! form a pipeline with no import circles (read with syn: test-only items
//! are left out, everything else counts), and in cuport_rewrite only the
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

/// Whether an item is compiled only for tests (`#[cfg(test)]`): its
/// imports are not the module's, and `super::` inside it means the file.
fn test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg")
            && a.parse_args::<syn::Meta>()
                .is_ok_and(|m| m.path().is_ident("test"))
    })
}

/// Collects the `crate::` and `super::` paths a file's non-test code names,
/// resolved to `a::b::c` from the module they are written in (inline
/// modules included).
struct PathCollector {
    /// The module the code being visited is in (`dual::c`, plus inline
    /// module names).
    module: Vec<String>,
    paths: Vec<String>,
}

impl PathCollector {
    fn record(&mut self, segments: &[String]) {
        let mut base: Vec<String> = match segments.first().map(String::as_str) {
            Some("crate") => Vec::new(),
            Some("super") => self.module.clone(),
            _ => return,
        };
        let mut rest = &segments[1..];
        if segments[0] == "super" {
            base.pop();
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        base.extend(rest.iter().filter(|s| *s != "self").cloned());
        if !base.is_empty() {
            self.paths.push(base.join("::"));
        }
    }

    /// Every path a `use` tree names (`a::{b, c::*}` → `a::b`, `a::c`).
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                prefix.push(n.ident.to_string());
                self.record(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Rename(r) => {
                prefix.push(r.ident.to_string());
                self.record(&prefix.clone());
                prefix.pop();
            }
            syn::UseTree::Glob(_) => self.record(&prefix.clone()),
            syn::UseTree::Group(g) => {
                for item in &g.items {
                    self.use_tree(prefix, item);
                }
            }
        }
    }
}

impl<'ast> syn::visit::Visit<'ast> for PathCollector {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Mod(m) => &m.attrs,
            syn::Item::Fn(f) => &f.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Use(u) => &u.attrs,
            syn::Item::Struct(s) => &s.attrs,
            syn::Item::Enum(e) => &e.attrs,
            syn::Item::Const(c) => &c.attrs,
            syn::Item::Static(s) => &s.attrs,
            syn::Item::Trait(t) => &t.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        // `mod x;` declares a file module; it imports nothing.
        if item.content.is_some() {
            self.module.push(item.ident.to_string());
            syn::visit::visit_item_mod(self, item);
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        self.use_tree(&mut Vec::new(), &item.tree);
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.record(&segments);
        syn::visit::visit_path(self, path);
    }
}

/// Paths named after `crate::` or `super::` in `code`'s non-test items
/// (`super` resolved against `module`), as `a::b::c`.
fn referenced_paths(code: &str, module: &str) -> Vec<String> {
    let file = syn::parse_file(code).unwrap_or_else(|e| panic!("{module}: does not parse: {e}"));
    let mut collector = PathCollector {
        module: module
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        paths: Vec::new(),
    };
    syn::visit::Visit::visit_file(&mut collector, &file);
    collector.paths
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
        let code = std::fs::read_to_string(file).unwrap();
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
    let code = "use super::names::x; use crate::plan::Planner; fn f() { let y = my_crate::z; }";
    assert_eq!(
        referenced_paths(code, "dual::c"),
        ["dual::names::x", "plan::Planner"]
    );
}

/// The bug this checker had: everything after a file's first
/// `#[cfg(test)]` was skipped, so a `#[cfg(test)]` function in the middle
/// hid the imports below it.
#[test]
fn the_checker_reads_past_test_items_and_into_inline_modules() {
    let code = "
        #[cfg(test)]
        fn only_in_tests() { crate::fixtures::x(); }
        use crate::after::Thing;
        mod inner { use super::super::sibling::y; fn g() { crate::deep::f(); } }
        #[cfg(test)]
        mod tests { use super::*; use crate::test_support::z; }
        fn h() -> crate::types::T { super::peer::make() }
    ";
    assert_eq!(
        referenced_paths(code, "stage::file"),
        [
            "after::Thing",
            "stage::sibling::y",
            "deep::f",
            "types::T",
            "stage::peer::make"
        ]
    );
}
