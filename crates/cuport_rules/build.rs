//! Embeds every `mappings/**/*.toml` rule file in the library so the built-in
//! tables need no file system at run time, and each one parsed ahead of
//! time (postcard, with its spans): parsing 2 MB of TOML was most of the
//! fixed cost of every run. Also the built-in files' fingerprint.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

// The rule-file types themselves, so that what is stored is exactly what a
// run would parse from the TOML.
#[allow(dead_code, unused_imports, unreachable_pub)]
#[path = "src/model.rs"]
mod model;
#[allow(dead_code, unused_imports, unreachable_pub)]
#[path = "src/raw.rs"]
mod raw;
// The built-in files' fingerprint is computed here, as a run would.
#[path = "src/fingerprint.rs"]
mod fingerprint;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../../mappings");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &root, &mut files);
    // In the order of their embedded names, which lookups binary-search
    // (a path's own order differs: `a/x.toml` before `a-b.toml`).
    files.sort_by_key(|path| embedded_name(&root, path));
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default());
    let mut code = embed("BUILTIN_FILES", &root, &files);
    // Each file read once, for its stored form and the fingerprint.
    let texts: Vec<RuleText> = files
        .iter()
        .map(|path| RuleText {
            name: embedded_name(&root, path),
            text: std::fs::read_to_string(path)
                .unwrap_or_else(|err| panic!("cannot read {}: {err}", path.display())),
        })
        .collect();
    code.push_str(&precompile(&texts, &out_dir));
    code.push_str(&builtin_fingerprint(&texts));
    // Per-version API support lists (generated data, not rule files).
    let support = target_files(&root, SUPPORT_DIR, &["csv", "toml"]);
    code.push_str(&embed("SUPPORT_FILES", &root, &support));
    // Vendor operator tables (`<target>/operators/*.toml`): their own format.
    let operators = target_files(&root, OPERATORS_DIR, &["toml"]);
    code.push_str(&embed("OPERATOR_FILES", &root, &operators));
    let out = out_dir.join("builtin_files.rs");
    if let Err(err) = std::fs::write(&out, code) {
        panic!("cannot write {}: {err}", out.display());
    }
}

/// Where a target's generated per-version API support lists live
/// (`mappings/<target>/api-support/`).
const SUPPORT_DIR: &str = "api-support";

/// Where a target's vendor operator tables live (`mappings/<target>/operators/`).
const OPERATORS_DIR: &str = "operators";

/// The files with one of `extensions` in each target's folder `dir`
/// (`mappings/<target>/<dir>/`), sorted.
fn target_files(root: &Path, dir: &str, extensions: &[&str]) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|target| target.path().join(dir))
        .flat_map(|dir| std::fs::read_dir(dir).into_iter().flatten().flatten())
        .map(|e| e.path())
        .filter(|p| {
            p.extension()
                .is_some_and(|e| extensions.iter().any(|x| e == *x))
        })
        .collect();
    files.sort();
    files
}

/// A `static NAME: &[(path, text)]` embedding `files`.
fn embed(name: &str, root: &Path, files: &[PathBuf]) -> String {
    let mut code = format!("pub(crate) static {name}: &[(&str, &str)] = &[\n");
    for path in files {
        println!("cargo:rerun-if-changed={}", path.display());
        push_row(&mut code, &embedded_name(root, path), path, "include_str");
    }
    code.push_str("];\n");
    code
}

/// A rule file's embedded name and text.
struct RuleText {
    name: String,
    text: String,
}

/// A `static PRECOMPILED: &[(path, bytes)]`: each rule file parsed into the
/// rule-file types and stored with postcard (a run read the JSON this
/// replaced at a third of the speed). A file that does not parse is left
/// out; the run parses its TOML and reports the problem with its line. So
/// is one whose stored form does not read back as what was stored (a type
/// postcard cannot hold), with a build warning: the run parses its TOML.
fn precompile(files: &[RuleText], out_dir: &Path) -> String {
    let mut code = String::from("pub(crate) static PRECOMPILED: &[(&str, &[u8])] = &[\n");
    for RuleText { name, text } in files {
        let Ok(file) = toml::from_str::<raw::RuleFile>(text) else {
            continue;
        };
        let Some(bytes) = stored_form(&file) else {
            println!("cargo:warning={name}: its parsed form does not read back from postcard; runs parse its TOML");
            continue;
        };
        let stored = out_dir.join(format!("{}.postcard", name.replace('/', "__")));
        if let Err(err) = std::fs::write(&stored, bytes) {
            panic!("cannot write {}: {err}", stored.display());
        }
        push_row(&mut code, name, &stored, "include_bytes");
    }
    code.push_str("];\n");
    code
}

/// `file` as postcard bytes, if they read back as the same file (compared
/// through their JSON form, spans included).
fn stored_form(file: &raw::RuleFile) -> Option<Vec<u8>> {
    let bytes = postcard::to_allocvec(file).ok()?;
    let back: raw::RuleFile = postcard::from_bytes(&bytes).ok()?;
    let same = serde_json::to_value(file).ok()? == serde_json::to_value(&back).ok()?;
    same.then_some(bytes)
}

/// `const BUILTIN_FINGERPRINT`: the fingerprint of the embedded rule files
/// (built-in files have priority 0), in the order of their names, which
/// `files` has.
fn builtin_fingerprint(files: &[RuleText]) -> String {
    let parts = files.iter().map(|f| (f.name.as_str(), 0, f.text.as_str()));
    format!(
        "pub(crate) const BUILTIN_FINGERPRINT: u64 = {:#x};\n",
        fingerprint::of_sorted(parts)
    )
}

/// The name a file is embedded under: `mappings/` and its path there.
fn embedded_name(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    format!("mappings/{}", rel.to_string_lossy().replace('\\', "/"))
}

/// One `(name, contents of file)` row of an embedded table; `include` is
/// `include_str` or `include_bytes`.
fn push_row(code: &mut String, name: &str, file: &Path, include: &str) {
    let _ = writeln!(
        code,
        "    ({name:?}, {include}!({:?})),",
        file.display().to_string()
    );
}

/// Target profiles (`<target>/target.toml`) and the library table
/// (`mappings/libraries.toml`) are cuport_model's, not rule files.
fn is_profile(path: &Path, root: &Path) -> bool {
    let name = path.file_name().unwrap_or_default();
    name == "target.toml" || path == root.join("libraries.toml")
}

fn collect(root: &Path, dir: &Path, files: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir()
            && path
                .file_name()
                .is_some_and(|n| n == SUPPORT_DIR || n == OPERATORS_DIR)
        {
            println!("cargo:rerun-if-changed={}", path.display());
        } else if path.is_dir() {
            println!("cargo:rerun-if-changed={}", path.display());
            collect(root, &path, files);
        } else if path.extension().is_some_and(|e| e == "toml") && !is_profile(&path, root) {
            files.push(path);
        }
    }
}
