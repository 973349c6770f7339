//! Migrating a scanned tree and writing the result: a ported copy, in-place
//! rewrites with backups, or unified diffs. Writes are atomic (temporary
//! file, then rename), keep permissions, and never leave the chosen root.
use std::path::{Component, Path, PathBuf};

use cuport_analyze::{ScanReport, ScannedFile};
use cuport_model::Language;
use cuport_rules::RuleSet;
use rayon::prelude::*;

use crate::file::{migrate_source, FileMigration};
use crate::options::MigrateOptions;

#[derive(Debug, thiserror::Error)]
pub enum RewriteError {
    #[error("{path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{path} changed on disk while cuport was running; run the migration again")]
    ChangedDuringRun { path: PathBuf },
    #[error("output directory {out} is inside the tree being migrated ({root}); choose a directory outside it")]
    OutInsideRoot { out: PathBuf, root: PathBuf },
    #[error("refusing to write {path}: it is outside the output root")]
    OutsideRoot { path: PathBuf },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RewriteError + '_ {
    move |error| RewriteError::Io {
        path: path.to_path_buf(),
        error,
    }
}

/// One migrated file: where it is, its original bytes and the result.
#[derive(Debug, Clone)]
pub struct MigratedFile {
    /// Relative to the migrated root, `/`-separated.
    pub path: String,
    pub language: Language,
    pub original: Vec<u8>,
    pub result: FileMigration,
}

#[derive(Debug, Clone, Default)]
pub struct Migration {
    pub root: PathBuf,
    pub files: Vec<MigratedFile>,
}

impl Migration {
    pub fn changed_files(&self) -> impl Iterator<Item = &MigratedFile> {
        self.files.iter().filter(|f| f.result.changed())
    }
}

/// Migrates every analysed file of `report` (rooted at `report.root`).
pub fn migrate_report(
    report: &ScanReport,
    rules: &RuleSet,
    options: &MigrateOptions,
) -> Result<Migration, RewriteError> {
    let root = report.root.clone();
    let single_file = root.is_file();
    let files = report
        .files
        .par_iter()
        .map(|file| {
            let path = if single_file {
                root.clone()
            } else {
                root.join(&file.path)
            };
            migrate_one(&path, file, rules, options)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Migration { root, files })
}

fn migrate_one(
    path: &Path,
    file: &ScannedFile,
    rules: &RuleSet,
    options: &MigrateOptions,
) -> Result<MigratedFile, RewriteError> {
    let original = std::fs::read(path).map_err(io(path))?;
    if original.len() as u64 != file.bytes {
        return Err(RewriteError::ChangedDuringRun {
            path: path.to_path_buf(),
        });
    }
    let result = migrate_source(file.language, &original, &file.analysis, rules, options);
    Ok(MigratedFile {
        path: file.path.clone(),
        language: file.language,
        original,
        result,
    })
}

/// A unified diff of one file (`a/PATH` → `b/PATH`), empty when unchanged.
pub fn unified_diff(file: &MigratedFile) -> String {
    if !file.result.changed() {
        return String::new();
    }
    let old = String::from_utf8_lossy(&file.original);
    let new = String::from_utf8_lossy(&file.result.output);
    similar::TextDiff::from_lines(old.as_ref(), new.as_ref())
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{}", file.path), &format!("b/{}", file.path))
        .to_string()
}

impl Migration {
    /// Writes a ported copy of the whole tree under `out`: migrated files
    /// with their new content, every other file copied, so the copy builds
    /// on its own. `walker` lists the tree's files (relative paths).
    pub fn write_copy(&self, out: &Path, tree_files: &[PathBuf]) -> Result<usize, RewriteError> {
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
        let migrated: std::collections::HashMap<&str, &MigratedFile> =
            self.files.iter().map(|f| (f.path.as_str(), f)).collect();
        let mut written = 0;
        for rel in tree_files {
            let target = contained(&out_abs, rel)?;
            let source = self.root.join(rel);
            let key = rel.to_string_lossy().replace('\\', "/");
            match migrated.get(key.as_str()) {
                Some(file) => atomic_write(&target, &file.result.output, Some(&source))?,
                None => {
                    let bytes = std::fs::read(&source).map_err(io(&source))?;
                    atomic_write(&target, &bytes, Some(&source))?;
                }
            }
            written += 1;
        }
        Ok(written)
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
                let mut name = path.clone().into_os_string();
                name.push(".cuport.orig");
                let backup_path = PathBuf::from(name);
                if !backup_path.exists() {
                    atomic_write(&backup_path, &file.original, Some(&path))?;
                }
            }
            atomic_write(&path, &file.result.output, Some(&path))?;
            written += 1;
        }
        Ok(written)
    }
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
