//! Helpers the `migrate` CLI test files share.
#![allow(dead_code, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use tempfile::TempDir;

/// What one run printed and how it exited.
pub(crate) struct Run {
    pub(crate) stdout: String,
    pub(crate) stderr: String,
    pub(crate) code: Option<i32>,
}

impl Run {
    /// Fails with the whole stdout unless it contains `needle`.
    pub(crate) fn assert_stdout_contains(&self, needle: &str) {
        assert!(self.stdout.contains(needle), "{}", self.stdout);
    }

    /// Fails with the whole stderr unless it contains `needle`.
    pub(crate) fn assert_stderr_contains(&self, needle: &str) {
        assert!(self.stderr.contains(needle), "{}", self.stderr);
    }

    pub(crate) fn expect_code(self, code: i32) -> Self {
        assert_eq!(
            self.code,
            Some(code),
            "stdout:\n{}\nstderr:\n{}",
            self.stdout,
            self.stderr
        );
        self
    }
}

/// Copies the directory `src` to `dst`, recursively.
pub(crate) fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).expect("mkdir");
    for entry in std::fs::read_dir(src).expect("fixture dir") {
        let entry = entry.expect("entry");
        let to = dst.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_dir(&entry.path(), &to);
        } else {
            std::fs::copy(entry.path(), to).expect("copy");
        }
    }
}

/// A scratch directory with a copy of one fixture at `<scratch>/tree`.
pub(crate) fn scratch(fixture: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path().join("tree");
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures")
        .join(fixture);
    copy_dir(&src, &root);
    (dir, root)
}

pub(crate) fn migrate(path: &Path, args: &[&str]) -> Run {
    migrate_from(None, path, args)
}

/// `cuport migrate PATH ARGS...`, run in `dir` when given.
pub(crate) fn migrate_from(dir: Option<&Path>, path: &Path, args: &[&str]) -> Run {
    let mut command = Command::cargo_bin("cuport").expect("binary builds");
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let out = command
        .env("NO_COLOR", "1")
        .arg("migrate")
        .arg(path)
        .args(args)
        .output()
        .expect("runs");
    Run {
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        code: out.status.code(),
    }
}

/// Every file under `dir`: relative path → bytes.
pub(crate) fn read_tree(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(at) = stack.pop() {
        for entry in std::fs::read_dir(&at).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).expect("under dir");
                let key = rel.to_string_lossy().replace('\\', "/");
                files.insert(key, std::fs::read(&path).expect("read"));
            }
        }
    }
    files
}

pub(crate) fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
