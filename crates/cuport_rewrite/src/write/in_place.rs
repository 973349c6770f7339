//! Rewriting a tree where it is (`--in-place`). Every write is planned and
//! checked first (the file still holds what was migrated, it is writable,
//! a renamed file's new name is free); if any check fails nothing at all
//! is written. Symbolic links are never written through: the scan does not
//! follow them, so a linked file is migrated once, as its target.
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cuport_analyze::EntryKind;

use super::{atomic_write, backup_path_of};
use crate::rename::RenamePlan;
use crate::result::{io, MigratedFile, Migration, RewriteError};

/// How an in-place run treats backups and read-only files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InPlace {
    /// Keep `FILE.cuport.orig` next to each rewritten file (an existing
    /// backup is never overwritten, so the first original survives).
    pub backup: bool,
    /// Rewrite read-only files too (their mode is kept).
    pub force: bool,
}

/// One planned write.
struct Planned {
    path: PathBuf,
    bytes: Vec<u8>,
    /// The bytes the file holds now, kept as the backup.
    current: Vec<u8>,
    /// For a renamed source: the file's old path (removed, or kept as the
    /// backup, once the new one is written).
    renamed_from: Option<PathBuf>,
}

impl Migration {
    /// Rewrites changed files where they are, then the generated files;
    /// returns the number of files written.
    pub fn write_in_place(&self, how: InPlace) -> Result<usize, RewriteError> {
        self.write_in_place_renamed(how, &RenamePlan::default())
    }

    /// [`Migration::write_in_place`] with the sources renamed by `plan`:
    /// the new file is written, the old one becomes the backup (or is
    /// removed without backups), and files that refer to a renamed one are
    /// rewritten too, build files cuport did not migrate included.
    pub fn write_in_place_renamed(
        &self,
        how: InPlace,
        plan: &RenamePlan,
    ) -> Result<usize, RewriteError> {
        let writes = self.plan_in_place(plan)?;
        let problems: Vec<String> = writes
            .iter()
            .filter_map(|w| problem(w, how.force))
            .collect();
        if !problems.is_empty() {
            return Err(RewriteError::Refused { problems });
        }
        for write in &writes {
            execute(write, how.backup)?;
        }
        let generated = if self.root_is_file {
            0
        } else {
            self.write_generated(&self.root)?
        };
        Ok(writes.len() + generated)
    }

    /// Every write the run would make, each checked against the file as it
    /// is now.
    fn plan_in_place(&self, plan: &RenamePlan) -> Result<Vec<Planned>, RewriteError> {
        let migrated: HashMap<&str, &MigratedFile> =
            self.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut writes = Vec::new();
        if self.root_is_file {
            // A link given as the file to migrate is migrated as its target.
            let path = self.root.canonicalize().map_err(io(&self.root))?;
            for file in self.changed_files() {
                writes.push(planned(&path, file.result.output.clone(), Some(file))?);
            }
            return Ok(writes);
        }
        for entry in self.tree.iter().filter(|e| e.kind == EntryKind::File) {
            let path = self.root.join(&entry.path);
            let file = migrated.get(entry.path.as_str()).copied();
            let current = match file {
                Some(file) => file.original.to_vec(),
                None if plan.renames.is_empty() => continue,
                None => std::fs::read(&path).map_err(io(&path))?,
            };
            let base = file.map_or_else(|| current.clone(), |f| f.result.output.clone());
            let bytes = plan.update_references(&entry.path, &base).unwrap_or(base);
            let new_key = plan.new_path(&entry.path);
            if new_key == entry.path && bytes == current {
                continue;
            }
            let mut write = planned(&path, bytes, file)?;
            if new_key != entry.path {
                write.renamed_from =
                    Some(std::mem::replace(&mut write.path, self.root.join(new_key)));
            }
            writes.push(write);
        }
        Ok(writes)
    }
}

/// A write of `bytes` to the file at `path`, whose current content is read
/// now (and must still be what `migrated` was made from).
fn planned(
    path: &Path,
    bytes: Vec<u8>,
    migrated: Option<&MigratedFile>,
) -> Result<Planned, RewriteError> {
    let current = std::fs::read(path).map_err(io(path))?;
    if migrated.is_some_and(|f| *f.original != current) {
        return Err(RewriteError::ChangedDuringRun {
            path: path.to_path_buf(),
        });
    }
    Ok(Planned {
        path: path.to_path_buf(),
        bytes,
        current,
        renamed_from: None,
    })
}

/// Why `write` must not go ahead, if it must not.
fn problem(write: &Planned, force: bool) -> Option<String> {
    let source = write.renamed_from.as_ref().unwrap_or(&write.path);
    let metadata = std::fs::symlink_metadata(source).ok()?;
    if metadata.file_type().is_symlink() {
        return Some(format!(
            "{} is a symbolic link; cuport does not write through links (migrate its target)",
            source.display()
        ));
    }
    if metadata.permissions().readonly() && !force {
        return Some(format!(
            "{} is read-only; make it writable (e.g. check it out for edit) or pass --force to rewrite it and keep its mode",
            source.display()
        ));
    }
    if write.renamed_from.is_some() && std::fs::symlink_metadata(&write.path).is_ok() {
        return Some(format!(
            "cannot rename {} to {}: {} already exists; rename or remove one of them, or run without --rename-sources",
            source.display(),
            write.path.display(),
            write.path.display()
        ));
    }
    None
}

fn execute(write: &Planned, backup: bool) -> Result<(), RewriteError> {
    let source = write.renamed_from.as_ref().unwrap_or(&write.path);
    let backup_path = backup_path_of(source);
    let keep_backup = backup && !backup_path.exists();
    match &write.renamed_from {
        None => {
            if keep_backup {
                atomic_write(&backup_path, &write.current, Some(source))?;
            }
            atomic_write(&write.path, &write.bytes, Some(source))
        }
        Some(old) => {
            atomic_write(&write.path, &write.bytes, Some(old))?;
            if keep_backup {
                std::fs::rename(old, &backup_path).map_err(io(old))
            } else {
                std::fs::remove_file(old).map_err(io(old))
            }
        }
    }
}
