//! Embeds `mappings/libraries.toml` and every `mappings/<target>/target.toml`
//! so the profiles need no file system at run time. A new target folder with
//! a target.toml is picked up without a code change here.
use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let root = manifest.join("../../mappings");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut targets: Vec<(String, PathBuf)> = std::fs::read_dir(&root)
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("target.toml"))
        .filter(|path| path.is_file())
        .filter_map(|path| {
            let id = path.parent()?.file_name()?.to_string_lossy().into_owned();
            Some((id, path))
        })
        .collect();
    targets.sort();
    let libraries = root.join("libraries.toml");
    println!("cargo:rerun-if-changed={}", libraries.display());
    let mut code = format!(
        "pub(crate) static LIBRARIES_TOML: &str = include_str!({:?});\n",
        libraries.display().to_string()
    );
    code.push_str("pub(crate) static TARGET_TOMLS: &[(&str, &str)] = &[\n");
    for (id, path) in &targets {
        println!("cargo:rerun-if-changed={}", path.display());
        let _ = writeln!(
            code,
            "    ({id:?}, include_str!({:?})),",
            path.display().to_string()
        );
    }
    code.push_str("];\n");
    // The helper implementations a target's rewrites call, beside its
    // tables: `mappings/<target>/helpers/<name>`.
    code.push_str("pub(crate) static HELPER_SOURCES: &[(&str, &str, &str)] = &[\n");
    for (id, path) in &targets {
        let Some(dir) = path.parent().map(|d| d.join("helpers")) else {
            continue;
        };
        println!("cargo:rerun-if-changed={}", dir.display());
        let mut helpers: Vec<PathBuf> = std::fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .map(|entry| entry.path())
            .filter(|p| p.is_file())
            .collect();
        helpers.sort();
        for helper in helpers {
            let name = helper.file_name().map(|n| n.to_string_lossy().into_owned());
            println!("cargo:rerun-if-changed={}", helper.display());
            let _ = writeln!(
                code,
                "    ({id:?}, {:?}, include_str!({:?})),",
                name.unwrap_or_default(),
                helper.display().to_string()
            );
        }
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("profiles.rs");
    if let Err(err) = std::fs::write(&out, code) {
        panic!("cannot write {}: {err}", out.display());
    }
}
