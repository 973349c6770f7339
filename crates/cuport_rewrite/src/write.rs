//! Writing a migration: a ported copy of the tree, in-place rewrites with
//! backups, generated files. Writes are atomic (temporary file, then
//! rename), keep permissions, and never leave the chosen root.
use std::path::{Component, Path, PathBuf};

use crate::rename::RenamePlan;
use crate::result::{io, MigratedFile, Migration, RewriteError};
use crate::skeleton::KernelSkeleton;

impl Migration {
    /// Writes a ported copy of the whole tree under `out`: migrated files
    /// with their new content, every other file copied, so the copy builds
    /// on its own. `walker` lists the tree's files (relative paths).
    pub fn write_copy(&self, out: &Path, tree_files: &[PathBuf]) -> Result<usize, RewriteError> {
        self.write_copy_renamed(out, tree_files, &RenamePlan::default())
    }

    /// [`Migration::write_copy`] with the sources renamed by `plan`, and
    /// includes and build files updated to the new names.
    pub fn write_copy_renamed(
        &self,
        out: &Path,
        tree_files: &[PathBuf],
        plan: &RenamePlan,
    ) -> Result<usize, RewriteError> {
        let out_abs = self.prepare_out(out)?;
        let migrated: std::collections::HashMap<&str, &MigratedFile> =
            self.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut written = 0;
        for rel in tree_files {
            let source = self.root.join(rel);
            let key = rel_key(rel);
            let bytes = match migrated.get(key.as_str()) {
                Some(file) => file.result.output.clone(),
                None => std::fs::read(&source).map_err(io(&source))?,
            };
            let bytes = plan.update_references(&key, &bytes).unwrap_or(bytes);
            let target = contained(&out_abs, Path::new(plan.new_path(&key)))?;
            // A re-run into the same output rewrites only what changed.
            if !same_file(&target, &bytes, &source) {
                atomic_write(&target, &bytes, Some(&source))?;
            }
            written += 1;
        }
        Ok(written + self.write_generated(&out_abs)?)
    }

    /// Writes the generated files under `dir`. A file already there is
    /// replaced only when cuport generated it (its text says so), so a
    /// project's own `cuport/` files are never overwritten.
    pub fn write_generated(&self, dir: &Path) -> Result<usize, RewriteError> {
        for file in &self.generated {
            let target = contained(dir, Path::new(&file.path))?;
            if let Ok(existing) = std::fs::read(&target) {
                if existing == file.text.as_bytes() {
                    continue;
                }
                if !cuport_model::is_cuport_generated(&existing) {
                    return Err(RewriteError::WouldOverwrite { path: target });
                }
            }
            atomic_write(&target, file.text.as_bytes(), None)?;
        }
        Ok(self.generated.len())
    }

    /// Unified diffs of the generated files against what the tree holds
    /// (new files diff against nothing); unchanged ones are left out.
    pub fn generated_diffs(&self) -> Vec<String> {
        let base = if self.root.is_file() {
            self.root
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        } else {
            self.root.clone()
        };
        self.generated
            .iter()
            .filter_map(|file| {
                let existing = std::fs::read_to_string(base.join(&file.path)).ok();
                let old = existing.as_deref().unwrap_or("");
                if old == file.text {
                    return None;
                }
                let from = match existing {
                    Some(_) => format!("a/{}", file.path),
                    None => "/dev/null".to_owned(),
                };
                let diff = similar::TextDiff::from_lines(old, file.text.as_str())
                    .unified_diff()
                    .context_radius(3)
                    .header(&from, &format!("b/{}", file.path))
                    .to_string();
                Some(diff)
            })
            .collect()
    }

    /// Creates `out` after checking it is outside the migrated root.
    fn prepare_out(&self, out: &Path) -> Result<PathBuf, RewriteError> {
        let root = self.root.canonicalize().map_err(io(&self.root))?;
        // Checked before anything is created, so a refused run leaves no trace.
        let requested = std::path::absolute(out).map_err(io(out))?;
        let root_as_given = std::path::absolute(&self.root).map_err(io(&self.root))?;
        if requested.starts_with(&root) || requested.starts_with(&root_as_given) {
            return Err(RewriteError::OutInsideRoot {
                out: requested,
                root,
            });
        }
        std::fs::create_dir_all(out).map_err(io(out))?;
        let out_abs = out.canonicalize().map_err(io(out))?;
        if out_abs.starts_with(&root) {
            return Err(RewriteError::OutInsideRoot { out: out_abs, root });
        }
        Ok(out_abs)
    }

    /// Writes each skeleton at `out/skeleton.path`.
    pub fn write_skeletons(
        &self,
        out: &Path,
        skeletons: &[KernelSkeleton],
    ) -> Result<usize, RewriteError> {
        let out_abs = self.prepare_out(out)?;
        for skeleton in skeletons {
            let target = contained(&out_abs, Path::new(&skeleton.path))?;
            atomic_write(&target, skeleton.text.as_bytes(), None)?;
        }
        Ok(skeletons.len())
    }

    /// Rewrites changed files where they are; keeps `FILE.cuport.orig`
    /// backups unless `backup` is false (an existing backup is never
    /// overwritten, so the first original survives repeated runs).
    pub fn write_in_place(&self, backup: bool) -> Result<usize, RewriteError> {
        let single_file = self.root.is_file();
        let mut written = 0;
        for file in self.changed_files() {
            let path = if single_file {
                self.root.clone()
            } else {
                self.root.join(&file.path)
            };
            let current = std::fs::read(&path).map_err(io(&path))?;
            if current != file.original {
                return Err(RewriteError::ChangedDuringRun { path });
            }
            if backup {
                let backup_path = backup_path_of(&path);
                if !backup_path.exists() {
                    atomic_write(&backup_path, &file.original, Some(&path))?;
                }
            }
            atomic_write(&path, &file.result.output, Some(&path))?;
            written += 1;
        }
        if !single_file {
            written += self.write_generated(&self.root)?;
        }
        Ok(written)
    }
}

impl Migration {
    /// [`Migration::write_in_place`] with the sources renamed by `plan`:
    /// the new file is written, the old one becomes the `FILE.cuport.orig`
    /// backup (or is removed without `backup`), and files that refer to a
    /// renamed one are rewritten (with backups) too. `tree_files` lists the
    /// tree (relative paths), so build files cuport did not migrate follow.
    pub fn write_in_place_renamed(
        &self,
        backup: bool,
        tree_files: &[PathBuf],
        plan: &RenamePlan,
    ) -> Result<usize, RewriteError> {
        let migrated: std::collections::HashMap<&str, &MigratedFile> =
            self.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut written = 0;
        for rel in tree_files {
            let key = rel_key(rel);
            let path = self.root.join(rel);
            let current = std::fs::read(&path).map_err(io(&path))?;
            let base = match migrated.get(key.as_str()) {
                Some(file) if current != file.original => {
                    return Err(RewriteError::ChangedDuringRun { path });
                }
                Some(file) => file.result.output.clone(),
                None => current.clone(),
            };
            let bytes = plan.update_references(&key, &base).unwrap_or(base);
            let new_key = plan.new_path(&key);
            if new_key == key && bytes == current {
                continue;
            }
            let backup_path = backup_path_of(&path);
            if new_key == key {
                if backup && !backup_path.exists() {
                    atomic_write(&backup_path, &current, Some(&path))?;
                }
                atomic_write(&path, &bytes, Some(&path))?;
            } else {
                let new_path = self.root.join(new_key);
                if new_path.exists() {
                    return Err(RewriteError::RenameCollision {
                        from: key.clone(),
                        to: new_key.to_owned(),
                    });
                }
                atomic_write(&new_path, &bytes, Some(&path))?;
                if backup && !backup_path.exists() {
                    std::fs::rename(&path, &backup_path).map_err(io(&path))?;
                } else {
                    std::fs::remove_file(&path).map_err(io(&path))?;
                }
            }
            written += 1;
        }
        Ok(written)
    }
}

fn backup_path_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".cuport.orig");
    PathBuf::from(name)
}

/// A relative path as the migration names it (`/`-separated).
fn rel_key(rel: &Path) -> String {
    rel.to_string_lossy().replace('\\', "/")
}

/// `out/rel`, refusing any path that would leave `out`.
fn contained(out: &Path, rel: &Path) -> Result<PathBuf, RewriteError> {
    let escapes = rel
        .components()
        .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir));
    if escapes {
        return Err(RewriteError::OutsideRoot {
            path: rel.to_path_buf(),
        });
    }
    Ok(out.join(rel))
}

/// Whether `path` already holds `bytes` with `like`'s permissions.
fn same_file(path: &Path, bytes: &[u8], like: &Path) -> bool {
    let (Ok(existing), Ok(source)) = (std::fs::metadata(path), std::fs::metadata(like)) else {
        return false;
    };
    existing.len() == bytes.len() as u64
        && existing.permissions() == source.permissions()
        && std::fs::read(path).is_ok_and(|current| current == bytes)
}

/// Writes through a temporary file in the same directory and renames it
/// into place, so a crash never leaves half a file; copies `like`'s
/// permissions.
pub(crate) fn atomic_write(
    path: &Path,
    bytes: &[u8],
    like: Option<&Path>,
) -> Result<(), RewriteError> {
    use std::io::Write;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(io(dir))?;
    temp.write_all(bytes).map_err(io(path))?;
    if let Some(permissions) = like
        .and_then(|l| std::fs::metadata(l).ok())
        .map(|m| m.permissions())
    {
        temp.as_file()
            .set_permissions(permissions)
            .map_err(io(path))?;
    }
    temp.persist(path).map_err(|e| RewriteError::Io {
        path: path.to_path_buf(),
        error: e.error,
    })?;
    Ok(())
}

/// Every file of the tree at `root` that a ported copy must contain (the
/// walk honours the same ignore rules as the scan).
pub fn tree_files(
    root: &Path,
    include_hidden: bool,
    no_ignore: bool,
) -> Result<Vec<PathBuf>, RewriteError> {
    let mut files = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(!include_hidden)
        .ignore(!no_ignore)
        .git_ignore(!no_ignore)
        .git_exclude(!no_ignore)
        .parents(!no_ignore)
        .require_git(false)
        .build();
    for entry in walker {
        let entry = entry.map_err(|e| RewriteError::Io {
            path: root.to_path_buf(),
            error: std::io::Error::other(e.to_string()),
        })?;
        if entry.file_type().is_some_and(|t| t.is_file()) {
            if let Ok(rel) = entry.path().strip_prefix(root) {
                files.push(rel.to_path_buf());
            }
        }
    }
    files.sort();
    Ok(files)
}
