//! Every write a migration makes goes through this module: a ported copy
//! of the tree (`copy`), in-place rewrites with backups (`in_place`),
//! generated files, kernel skeletons and single output files. Writes are
//! atomic (temporary file, then rename), keep permissions, never follow a
//! symbolic link and never leave the chosen root.
mod copy;
mod in_place;

use std::path::{Component, Path, PathBuf};

use crate::result::{io, Migration, RewriteError};
use crate::skeleton::KernelSkeleton;

pub use copy::CopySummary;
pub use in_place::InPlace;

impl Migration {
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
        let base = if self.root_is_file {
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

    /// Writes `-o OUTFILE`: the one migrated file, plus the generated files
    /// (helpers the port calls) next to it. Returns the paths written.
    pub fn write_single(&self, file: &Path) -> Result<Vec<PathBuf>, RewriteError> {
        let [only] = self.files.as_slice() else {
            return Err(RewriteError::NotOneFile {
                count: self.files.len(),
            });
        };
        let source = self.root.clone();
        atomic_write(file, &only.result.output, Some(&source))?;
        let mut written = vec![file.to_path_buf()];
        let dir = file
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        self.write_generated(dir)?;
        written.extend(self.generated.iter().map(|g| dir.join(&g.path)));
        Ok(written)
    }
}

fn backup_path_of(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_owned();
    name.push(".cuport.orig");
    PathBuf::from(name)
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
    // A new copy has nothing at `path`: the source is then not looked at.
    let Ok(existing) = std::fs::metadata(path) else {
        return false;
    };
    let Ok(source) = std::fs::metadata(like) else {
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
    // The directory usually exists (a copy creates every directory first):
    // it is created only when the temporary file cannot be.
    let mut temp = match tempfile::NamedTempFile::new_in(dir) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir_all(dir).map_err(io(dir))?;
            tempfile::NamedTempFile::new_in(dir)
        }
        created => created,
    }
    .map_err(io(dir))?;
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
