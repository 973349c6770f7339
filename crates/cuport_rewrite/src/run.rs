//! Migrating a scanned tree: every file in parallel, then the files the
//! run generates (dual-stack shim, helper sources).
use std::path::Path;

use cuport_analyze::{map_largest_first, ScanReport, ScannedFile};
use cuport_rules::RuleSet;

use crate::file::{migrate_tree_file, TreeFile};
use crate::options::MigrateOptions;
use crate::result::{io, MigratedFile, Migration, RewriteError};
use crate::runtime_providers::RuntimeProviders;

/// Migrates every analysed file of `report` (rooted at `report.root`).
pub fn migrate_report(
    report: &ScanReport,
    rules: &RuleSet,
    options: &MigrateOptions,
) -> Result<Migration, RewriteError> {
    let root = report.root.clone();
    let single_file = report.root_is_file;
    let providers = RuntimeProviders::find(report, rules, options);
    let files = map_largest_first(
        &report.files,
        |file| file.bytes,
        |file| {
            let path = if single_file {
                root.clone()
            } else {
                root.join(&file.path)
            };
            migrate_one(&path, file, &providers, rules, options)
        },
    )
    .into_iter()
    .collect::<Result<Vec<_>, _>>()?;
    let generated = crate::mode::generated_files(report, &files, rules, options);
    // The copy reproduces the tree the scan listed (one file list for both).
    let tree = if single_file || !report.tree.is_empty() {
        report.tree.clone()
    } else {
        cuport_analyze::list_tree(&root).map_err(|e| RewriteError::Io {
            path: root.clone(),
            error: std::io::Error::other(e.to_string()),
        })?
    };
    Ok(Migration {
        root,
        root_is_file: single_file,
        tree,
        files,
        generated,
    })
}

fn migrate_one(
    path: &Path,
    file: &ScannedFile,
    providers: &RuntimeProviders,
    rules: &RuleSet,
    options: &MigrateOptions,
) -> Result<MigratedFile, RewriteError> {
    let original = match &file.source {
        Some(bytes) => std::sync::Arc::clone(bytes),
        None => std::sync::Arc::new(std::fs::read(path).map_err(io(path))?),
    };
    if original.len() as u64 != file.bytes {
        return Err(RewriteError::ChangedDuringRun {
            path: path.to_path_buf(),
        });
    }
    let tree_file = TreeFile {
        path: &file.path,
        language: file.language,
        runtime_provided: providers.provide_before_use(&file.path, &file.analysis),
        included_by_cuda_source: providers.relies_on_includer(&file.path),
    };
    let result = migrate_tree_file(&tree_file, &original, &file.analysis, rules, options);
    Ok(MigratedFile {
        path: file.path.clone(),
        language: file.language,
        original,
        result,
    })
}
