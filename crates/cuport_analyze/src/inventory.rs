//! Every entry of a tree, hidden and git-ignored ones included: what a
//! complete ported copy (`cuport migrate --out`) must reproduce. Listed by
//! the same scan that finds the sources, so the copy and the migration see
//! one file list.
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ignore::WalkBuilder;

/// What an entry of the tree is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryKind {
    Dir,
    File,
    /// A symbolic link, never followed: `target` is what the link says,
    /// `inside` whether it resolves to a path inside the root.
    Symlink {
        target: PathBuf,
        inside: bool,
    },
    /// A device, FIFO or socket: never read or copied.
    Special,
    /// A version-control directory (`.git`): the original repository's,
    /// not part of a ported copy; not descended into.
    VersionControl,
}

/// One entry, relative to the root (`/`-separated).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub path: String,
    pub kind: EntryKind,
}

/// Directories a copy of the tree leaves out: version-control metadata
/// belongs to the original repository, not to the ported copy.
pub const VCS_DIRS: &[&str] = &[".git", ".hg", ".svn"];

/// Every entry below `root` (sorted by path), or the walk errors as
/// `(path, reason)` when an entry cannot be read.
pub(crate) fn inventory(
    root: &Path,
    canonical_root: &Path,
) -> (Vec<TreeEntry>, Vec<(String, String)>) {
    let vcs: Arc<Mutex<Vec<PathBuf>>> = Arc::default();
    let seen = Arc::clone(&vcs);
    let walker = WalkBuilder::new(root)
        .standard_filters(false)
        .follow_links(false)
        .filter_entry(move |e| {
            let is_vcs = e.depth() > 0
                && e.file_type().is_some_and(|t| t.is_dir())
                && VCS_DIRS.iter().any(|v| e.file_name() == *v);
            if is_vcs {
                if let Ok(mut seen) = seen.lock() {
                    seen.push(e.path().to_path_buf());
                }
            }
            !is_vcs
        })
        .build();
    let mut entries = Vec::new();
    let mut errors = Vec::new();
    for entry in walker {
        let entry = match entry {
            Ok(entry) if entry.depth() > 0 => entry,
            Ok(_) => continue,
            Err(error) => {
                errors.push(("<walk>".to_owned(), error.to_string()));
                continue;
            }
        };
        let path = relative(root, entry.path());
        let Some(file_type) = entry.file_type() else {
            continue;
        };
        let kind = if file_type.is_symlink() {
            let target = std::fs::read_link(entry.path()).unwrap_or_default();
            let inside = resolves_inside(entry.path(), canonical_root);
            EntryKind::Symlink { target, inside }
        } else if file_type.is_dir() {
            EntryKind::Dir
        } else if file_type.is_file() {
            EntryKind::File
        } else {
            EntryKind::Special
        };
        entries.push(TreeEntry { path, kind });
    }
    let vcs = vcs.lock().map(|v| v.clone()).unwrap_or_default();
    entries.extend(vcs.iter().map(|path| TreeEntry {
        path: relative(root, path),
        kind: EntryKind::VersionControl,
    }));
    entries.sort_by(|a, b| a.path.cmp(&b.path));
    (entries, errors)
}

/// Whether the link at `path` resolves to an existing path inside the root.
fn resolves_inside(path: &Path, canonical_root: &Path) -> bool {
    path.canonicalize()
        .is_ok_and(|target| target.starts_with(canonical_root))
}

/// `path` relative to `root`, with `/` separators.
pub(crate) fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let text = rel.to_string_lossy().replace('\\', "/");
    if text.is_empty() {
        path.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    } else {
        text
    }
}
