//! A ported copy of the whole tree (`--out DIR`): migrated files with their
//! new content, every other file as it is, directories (empty ones too),
//! and symbolic links that stay inside the tree as links. What cannot be
//! copied (links out of the tree, devices, FIFOs, version-control
//! directories) is listed with the reason, never dropped silently.
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cuport_analyze::{EntryKind, TreeEntry};
use rayon::prelude::*;

use super::{atomic_write, contained, same_file};
use crate::rename::RenamePlan;
use crate::result::{io, MigratedFile, Migration, RewriteError};

/// What a copy wrote and what it left out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CopySummary {
    /// Files written with migrated content.
    pub migrated: usize,
    /// Files copied as they are (content unchanged, or only references to
    /// renamed sources updated).
    pub copied: usize,
    pub directories: usize,
    pub symlinks: usize,
    /// Files the run generated (shim, helpers).
    pub generated: usize,
    /// `(path, reason)` for every entry not reproduced in the copy.
    pub left_out: Vec<(String, String)>,
}

impl CopySummary {
    pub fn files(&self) -> usize {
        self.migrated + self.copied + self.generated
    }
}

impl Migration {
    /// Writes a ported copy of the whole tree under `out` (see the module
    /// documentation), with the sources renamed by `plan` and includes and
    /// build files updated to the new names. A re-run into the same output
    /// rewrites only what changed.
    pub fn write_copy(&self, out: &Path, plan: &RenamePlan) -> Result<CopySummary, RewriteError> {
        let out_abs = self.prepare_out(out)?;
        let migrated: HashMap<&str, &MigratedFile> =
            self.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut summary = CopySummary::default();
        // Directories are created first, then links, then files, the
        // directories and files in parallel: on a 2-core machine that
        // halves the time a copy spends in the file system (cuda-samples:
        // 223 directories and 627 files, each an atomic write).
        let mut dirs = Vec::new();
        let mut links = Vec::new();
        let mut files = Vec::new();
        for entry in &self.tree {
            let source = self.root.join(&entry.path);
            let target = contained(&out_abs, Path::new(plan.new_path(&entry.path)))?;
            match &entry.kind {
                EntryKind::Dir => {
                    dirs.push(target);
                    summary.directories += 1;
                }
                EntryKind::File => {
                    let file = migrated.get(entry.path.as_str()).copied();
                    if file.is_some() {
                        summary.migrated += 1;
                    } else {
                        summary.copied += 1;
                    }
                    files.push((source, target, entry.path.as_str(), file));
                }
                EntryKind::Symlink { target: link, inside: true } => {
                    links.push((target, self.link_target_in_copy(entry, link)));
                    summary.symlinks += 1;
                }
                EntryKind::Symlink { target: link, .. } => summary.left_out.push((
                    entry.path.clone(),
                    format!(
                        "symbolic link to {} (outside the migrated tree or missing); not copied: recreate it in the copy if the port needs it",
                        link.display()
                    ),
                )),
                EntryKind::Special => summary.left_out.push((
                    entry.path.clone(),
                    "not a regular file (device, FIFO or socket); not copied".to_owned(),
                )),
                EntryKind::VersionControl => summary.left_out.push((
                    format!("{}/", entry.path),
                    "the original repository's version-control data; not copied (the ported copy is a new tree)".to_owned(),
                )),
            }
        }
        // `create_dir_all` takes a parent another thread created meanwhile.
        dirs.par_iter()
            .try_for_each(|dir| std::fs::create_dir_all(dir).map_err(io(dir)))?;
        for (target, link) in &links {
            write_symlink(target, link)?;
        }
        files
            .par_iter()
            .try_for_each(|(source, target, key, file)| {
                copy_file(source, target, key, *file, plan)
            })?;
        summary.generated = self.write_generated(&out_abs)?;
        Ok(summary)
    }

    /// What a link of the tree says in the copy: relative targets as they
    /// are; absolute ones into the tree made relative, so the copy's link
    /// points into the copy, not back into the original.
    fn link_target_in_copy(&self, entry: &TreeEntry, link: &Path) -> PathBuf {
        if link.is_relative() {
            return link.to_path_buf();
        }
        let (Ok(root), Ok(resolved)) = (self.root.canonicalize(), link.canonicalize()) else {
            return link.to_path_buf();
        };
        let Ok(inside) = resolved.strip_prefix(&root) else {
            return link.to_path_buf();
        };
        let depth = entry.path.matches('/').count();
        let mut relative = PathBuf::new();
        for _ in 0..depth {
            relative.push("..");
        }
        relative.join(inside)
    }
}

/// One file of the copy: the migrated bytes (or the original ones), with
/// references to renamed sources updated; unchanged outputs are left alone.
fn copy_file(
    source: &Path,
    target: &Path,
    key: &str,
    migrated: Option<&MigratedFile>,
    plan: &RenamePlan,
) -> Result<(), RewriteError> {
    let bytes = match migrated {
        Some(file) => Cow::Borrowed(file.result.output.as_slice()),
        None => Cow::Owned(std::fs::read(source).map_err(io(source))?),
    };
    let bytes = plan
        .update_references(key, &bytes)
        .map_or(bytes, Cow::Owned);
    if !same_file(target, &bytes, source) {
        atomic_write(target, &bytes, Some(source))?;
    }
    Ok(())
}

/// Creates (or replaces) the symbolic link `path` → `link`. Only a link (or
/// nothing) may be at `path`: a regular file there is never written through.
fn write_symlink(path: &Path, link: &Path) -> Result<(), RewriteError> {
    if let Ok(existing) = std::fs::symlink_metadata(path) {
        if existing.file_type().is_symlink() {
            if std::fs::read_link(path).is_ok_and(|t| t == link) {
                return Ok(());
            }
            std::fs::remove_file(path).map_err(io(path))?;
        } else {
            return Err(RewriteError::WouldOverwrite {
                path: path.to_path_buf(),
            });
        }
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    make_symlink(link, path).map_err(io(path))
}

#[cfg(unix)]
fn make_symlink(link: &Path, path: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(link, path)
}

#[cfg(not(unix))]
fn make_symlink(link: &Path, path: &Path) -> std::io::Result<()> {
    let resolved = path.parent().unwrap_or(Path::new(".")).join(link);
    if resolved.is_dir() {
        std::os::windows::fs::symlink_dir(link, path)
    } else {
        std::os::windows::fs::symlink_file(link, path)
    }
}
