//! Finding libraries and version files on disk without loading anything.
use std::path::{Path, PathBuf};

use crate::Config;

/// Library directories to search: vendor directories first, then
/// `LD_LIBRARY_PATH` (absolute entries only), then the system ones.
pub(crate) fn library_dirs(config: &Config, vendor: &[PathBuf]) -> Vec<PathBuf> {
    let multiarch = format!("{}-linux-gnu", std::env::consts::ARCH);
    let mut dirs: Vec<PathBuf> = vendor.to_vec();
    if let Some(paths) = config.env_var("LD_LIBRARY_PATH") {
        dirs.extend(std::env::split_paths(&paths).filter(|p| p.is_absolute()));
    }
    for system in ["/lib", "/usr/lib", "/usr/local/lib"] {
        dirs.push(Path::new(system).join(&multiarch));
    }
    dirs.extend(["/usr/lib64", "/lib64", "/usr/lib"].map(PathBuf::from));
    dirs
}

/// Whether every `LD_LIBRARY_PATH` entry is absolute. An empty or relative
/// entry makes `dlopen` of a bare name search the current directory.
pub(crate) fn loader_path_is_absolute(config: &Config) -> bool {
    config.env_var("LD_LIBRARY_PATH").is_none_or(|paths| {
        paths
            .to_str()
            .is_some_and(|text| text.split(':').all(|entry| entry.starts_with('/')))
    })
}

/// What to hand `dlopen` for a driver library known by its soname: its
/// absolute path when it is in a known directory, else the bare name (so the
/// loader cache is used) unless `LD_LIBRARY_PATH` could make that resolve in
/// the current directory.
pub(crate) fn driver_library(config: &Config, soname: &str) -> Option<String> {
    let found = library_dirs(config, &[])
        .into_iter()
        .map(|dir| dir.join(soname))
        .find(|path| path.is_file());
    match found {
        Some(path) => Some(path.display().to_string()),
        None => loader_path_is_absolute(config).then(|| soname.to_owned()),
    }
}

/// The first `stem.so` or `stem.so.N...` file in `dirs`; the unversioned
/// name wins within one directory.
pub(crate) fn find_library(stem: &str, dirs: &[PathBuf]) -> Option<PathBuf> {
    let plain = format!("{stem}.so");
    let versioned = format!("{stem}.so.");
    dirs.iter().find_map(|dir| {
        let exact = dir.join(&plain);
        if exact.is_file() {
            return Some(exact);
        }
        let mut names: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                path.file_name()
                    .and_then(|name| name.to_str())
                    .is_some_and(|name| name.starts_with(&versioned))
            })
            .collect();
        names.sort();
        names.into_iter().next()
    })
}

/// The value of `key=value` (or `key: value`) in a small vendor version file.
pub(crate) fn version_from_file(path: &Path, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(['=', ':'])?;
        name.trim()
            .eq_ignore_ascii_case(key)
            .then(|| value.trim().to_owned())
    })
}

/// The first line of a file, trimmed (for `/opt/rocm/.info/version`).
pub(crate) fn first_line(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::expect_used)]
    use super::*;

    #[test]
    fn version_files_accept_equals_or_colon_and_any_key_case() {
        let dir = tempfile::tempdir().expect("tempdir");
        let info = dir.path().join("ascend_toolkit_install.info");
        std::fs::write(&info, "package_name=Ascend-cann-toolkit\nversion=8.0.RC3\n")
            .expect("write");
        assert_eq!(
            version_from_file(&info, "Version").as_deref(),
            Some("8.0.RC3")
        );
        assert_eq!(version_from_file(&info, "arch"), None);
        assert_eq!(version_from_file(&dir.path().join("none"), "version"), None);
    }

    #[test]
    fn the_unversioned_library_wins_then_the_first_versioned_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("libx.so.2"), "").expect("write");
        std::fs::write(dir.path().join("libx.so.1"), "").expect("write");
        let dirs = [dir.path().to_path_buf()];
        assert_eq!(
            find_library("libx", &dirs),
            Some(dir.path().join("libx.so.1"))
        );
        std::fs::write(dir.path().join("libx.so"), "").expect("write");
        assert_eq!(
            find_library("libx", &dirs),
            Some(dir.path().join("libx.so"))
        );
        assert_eq!(find_library("liby", &dirs), None);
    }
}
