//! Scanning a whole tree: a parallel walk (the `ignore` crate, so
//! `.gitignore` and hidden-file rules hold), then a parallel analysis of each
//! recognised file. Problems with single files are reported, never fatal.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cuport_model::{Language, SiteKind};
use ignore::overrides::OverrideBuilder;
use ignore::{WalkBuilder, WalkState};
use rayon::prelude::*;
use rustc_hash::FxHashSet;

use crate::error::AnalyzeError;
use crate::file::{analyze_known, AnalyzeOptions};
use crate::inventory::{inventory, relative, TreeEntry};
pub use crate::known::KnownNames;
use crate::site::{ScannedFile, SkippedFile};

/// Bytes examined for NUL when deciding whether a file is binary.
const BINARY_SNIFF_LEN: usize = 8192;

#[derive(Debug, Clone)]
pub struct ScanOptions {
    /// Globs (gitignore syntax) of paths to leave out.
    pub excludes: Vec<String>,
    /// Also scan hidden files and directories.
    pub include_hidden: bool,
    /// Ignore `.gitignore`/`.ignore` files.
    pub no_ignore: bool,
    /// Files larger than this are skipped with a warning.
    pub max_file_size: u64,
    pub analyze: AnalyzeOptions,
    /// Worker threads; 0 picks one per core.
    pub threads: usize,
    /// Real CUDA names, never mistaken for the project's own definitions.
    pub known_names: Option<KnownNames>,
    /// Keep each analysed file's bytes in `ScannedFile::source`.
    pub keep_sources: bool,
    /// Also list every entry of the tree in `ScanReport::tree` (hidden,
    /// ignored and excluded ones too), for a complete copy.
    pub inventory: bool,
}

impl Default for ScanOptions {
    fn default() -> Self {
        Self {
            excludes: Vec::new(),
            include_hidden: false,
            no_ignore: false,
            max_file_size: 32 * 1024 * 1024,
            analyze: AnalyzeOptions::default(),
            threads: 0,
            known_names: None,
            keep_sources: false,
            inventory: false,
        }
    }
}

/// Receives progress as files are analysed (the CLI draws a bar from it).
pub trait Progress: Sync {
    fn total(&self, files: usize);
    fn advance(&self);
}

struct NoProgress;

impl Progress for NoProgress {
    fn total(&self, _files: usize) {}
    fn advance(&self) {}
}

/// A [`Progress`] that ignores everything.
pub static NO_PROGRESS: &(dyn Progress + 'static) = &NoProgress;

#[derive(Debug, Clone, Default)]
pub struct ScanReport {
    pub root: PathBuf,
    /// Analysed files, sorted by path.
    pub files: Vec<ScannedFile>,
    /// Recognised files that could not be analysed, with the reason.
    pub skipped: Vec<SkippedFile>,
    /// Files of other types that were walked past (not sources cuport reads).
    pub other_files: usize,
    /// CUDA-looking names the project defines itself, with the number of
    /// uses that were therefore not counted as CUDA touchpoints.
    pub project_names: BTreeMap<String, usize>,
    /// Whether the root is one file rather than a directory (asked of the
    /// file system once, here).
    pub root_is_file: bool,
    /// Every entry of the tree (with `ScanOptions::inventory`): what a
    /// complete copy must reproduce. Symbolic links are listed, never
    /// followed; version-control directories are left out.
    pub tree: Vec<TreeEntry>,
}

/// Scans `root` (a directory or a single file).
pub fn scan_tree(
    root: &Path,
    options: &ScanOptions,
    progress: &dyn Progress,
) -> Result<ScanReport, AnalyzeError> {
    // The tables' name index is built on its first use, which would hold up
    // every analysis thread; the walk mostly waits on the file system, so
    // it is built beside the walk instead.
    let prepare = || options.known_names.as_ref().map(KnownNames::prepare);
    let found = rayon::join(|| find_files(root, options), prepare).0?;
    scan_found(found, options, progress)
}

/// The files of a tree that cuport analyses, found by the walk, and their
/// bytes where [`FoundFiles::read_all`] read them. Finding and reading
/// need no rule tables, so a caller can do both while it loads them.
#[derive(Debug)]
pub struct FoundFiles {
    root: PathBuf,
    root_is_file: bool,
    walked: Walked,
    /// Each file's bytes (or why it is skipped), in `walked.files`' order,
    /// once read.
    read: Option<Vec<ReadOutcome>>,
    /// The list of every entry, where `ScanOptions::inventory` asked for it
    /// and it was made beside the reads.
    listed: Option<Listed>,
}

/// A file's bytes, and its size as the file system gave it before they
/// were read: the migration compares the two to notice a file that changed
/// meanwhile.
#[derive(Debug)]
struct SourceBytes {
    bytes: Vec<u8>,
    stat_size: u64,
}

/// A file's bytes, or why it is skipped.
type ReadOutcome = Result<SourceBytes, SkippedFile>;

/// Every entry of a tree, and the entries that could not be listed (path,
/// reason).
type Listed = Result<(Vec<TreeEntry>, Vec<(String, String)>), AnalyzeError>;

/// Walks `root` (a directory or a single file) for the files cuport
/// analyses, without reading them.
pub fn find_files(root: &Path, options: &ScanOptions) -> Result<FoundFiles, AnalyzeError> {
    let metadata = std::fs::metadata(root).map_err(|source| AnalyzeError::Root {
        path: root.to_path_buf(),
        source,
    })?;
    let walked = if metadata.is_file() {
        single_file(root)
    } else {
        walk(root, options)?
    };
    Ok(FoundFiles {
        root: root.to_path_buf(),
        root_is_file: metadata.is_file(),
        walked,
        read: None,
        listed: None,
    })
}

impl FoundFiles {
    /// Reads every file found, `readers` files at a time (telling
    /// `progress`), and lists the tree beside the reads where
    /// `options.inventory` asks for the list.
    /// Reading waits on the disk where the tree is not in the page cache,
    /// and a disk serves several reads at once faster than one after the
    /// other, so `readers` may exceed the cores.
    pub fn read_all(&mut self, options: &ScanOptions, readers: usize, progress: &dyn Progress) {
        progress.total(self.walked.files.len());
        let (read, listed) = std::thread::scope(|scope| {
            let listed = scope.spawn(|| list_for(&self.root, self.root_is_file, options));
            let read = read_files(&self.root, &self.walked.files, options, readers, progress);
            let listed = listed
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (read, listed)
        });
        self.read = Some(read);
        self.listed = listed;
    }
}

/// Each file's bytes (or why it is skipped), `readers` files at a time, in
/// `files`' order.
fn read_files(
    root: &Path,
    files: &[(PathBuf, Language, u64)],
    options: &ScanOptions,
    readers: usize,
    progress: &dyn Progress,
) -> Vec<ReadOutcome> {
    let read = || {
        files
            .par_iter()
            .with_max_len(1)
            .map(|(path, _, _)| {
                let outcome = read_source(root, path, options);
                progress.advance();
                outcome
            })
            .collect()
    };
    run_in_pool(readers, read)
}

/// The list of every entry of the tree at `root`, where `options` asks for
/// it (a copy reproduces the whole tree).
fn list_for(root: &Path, root_is_file: bool, options: &ScanOptions) -> Option<Listed> {
    (options.inventory && !root_is_file)
        .then(|| canonical(root).map(|canonical_root| inventory(root, &canonical_root)))
}

/// Analyses the files `found` (reading those not read yet).
pub fn scan_found(
    found: FoundFiles,
    options: &ScanOptions,
    progress: &dyn Progress,
) -> Result<ScanReport, AnalyzeError> {
    let FoundFiles {
        root,
        root_is_file,
        walked,
        read,
        listed,
    } = found;
    let root = root.as_path();
    progress.total(walked.files.len());
    // Each file with its bytes where they were read already.
    let read = read.map_or_else(
        || walked.files.iter().map(|_| None).collect(),
        |read| read.into_iter().map(Some).collect::<Vec<_>>(),
    );
    let files: Vec<_> = walked.files.iter().zip(read).collect();
    let analyse = || {
        map_largest_first_owned(
            files,
            |((_, _, bytes), _)| *bytes,
            |((path, language, _), read)| {
                let read = read.unwrap_or_else(|| read_source(root, path, options));
                let outcome = read.map(|read| analyze_read(root, path, *language, read, options));
                progress.advance();
                outcome
            },
        )
    };
    // The copy's list of every entry is a second walk, mostly waiting on
    // the file system: it runs beside the analysis unless it was made
    // beside the reads.
    let list = || listed.or_else(|| list_for(root, root_is_file, options));
    let (outcomes, listed) = rayon::join(|| run_in_pool(options.threads, analyse), list);
    let mut report = ScanReport {
        root: root.to_path_buf(),
        skipped: walked.skipped,
        other_files: walked.other_files,
        root_is_file,
        ..ScanReport::default()
    };
    if let Some(listed) = listed {
        let (tree, errors) = listed?;
        report.tree = tree;
        for (path, reason) in errors {
            if !report.skipped.iter().any(|s| s.reason == reason) {
                report.skipped.push(SkippedFile { path, reason });
            }
        }
    }
    for outcome in outcomes {
        match outcome {
            Ok(file) => report.files.push(file),
            Err(skipped) => report.skipped.push(skipped),
        }
    }
    report.files.sort_by(|a, b| a.path.cmp(&b.path));
    report.skipped.sort_by(|a, b| a.path.cmp(&b.path));
    drop_project_names(&mut report, options.known_names.as_ref());
    Ok(report)
}

/// Every entry of the tree at `root` (see [`TreeEntry`]), for a caller
/// whose scan did not ask for `ScanOptions::inventory`.
pub fn list_tree(root: &Path) -> Result<Vec<TreeEntry>, AnalyzeError> {
    let canonical_root = canonical(root)?;
    Ok(inventory(root, &canonical_root).0)
}

/// `map` applied to every item in parallel, the results in `items`' order.
/// The items are shared out over the threads largest first (by `size`), so
/// that no big file is started last and run alone while the other threads
/// idle (cuda-samples' 1 MB `sobol_primitives.cpp` made a quarter of a
/// port's time single-threaded). The scan and the migration both use it.
pub fn map_largest_first<T: Sync, R: Send>(
    items: &[T],
    size: impl Fn(&T) -> u64,
    map: impl Fn(&T) -> R + Sync + Send,
) -> Vec<R> {
    map_largest_first_owned(items.iter().collect(), |item| size(item), map)
}

/// [`map_largest_first`] for items `map` takes by value.
fn map_largest_first_owned<T: Send, R: Send>(
    items: Vec<T>,
    size: impl Fn(&T) -> u64,
    map: impl Fn(T) -> R + Sync + Send,
) -> Vec<R> {
    let mut ordered: Vec<(usize, T)> = items.into_iter().enumerate().collect();
    ordered.sort_by_key(|(_, item)| std::cmp::Reverse(size(item)));
    // One item per job: rayon otherwise hands each thread a run of items
    // it works through alone, and the thread whose run starts with the
    // largest file finished last while the others idled.
    let mut done: Vec<(usize, R)> = ordered
        .into_par_iter()
        .with_max_len(1)
        .map(|(i, item)| (i, map(item)))
        .collect();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, result)| result).collect()
}

/// `work` on a pool of `threads` threads (0: the current pool).
fn run_in_pool<T: Send>(threads: usize, work: impl FnOnce() -> T + Send) -> T {
    if threads == 0 {
        return work();
    }
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build() {
        Ok(pool) => pool.install(work),
        Err(_) => work(),
    }
}

#[derive(Debug, Default)]
struct Walked {
    /// Each file found, its language and its size (for scheduling only).
    files: Vec<(PathBuf, Language, u64)>,
    skipped: Vec<SkippedFile>,
    other_files: usize,
}

fn single_file(path: &Path) -> Walked {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy())
        .unwrap_or_default();
    let mut walked = Walked::default();
    match Language::from_file_name(&name) {
        Some(language) => walked.files.push((path.to_path_buf(), language, 0)),
        None => walked.skipped.push(SkippedFile {
            path: name.into_owned(),
            reason: "not a file type cuport analyses (by name)".into(),
        }),
    }
    walked
}

fn canonical(root: &Path) -> Result<PathBuf, AnalyzeError> {
    root.canonicalize().map_err(|source| AnalyzeError::Root {
        path: root.to_path_buf(),
        source,
    })
}

fn walk(root: &Path, options: &ScanOptions) -> Result<Walked, AnalyzeError> {
    let canonical_root = canonical(root)?;
    let walker = walk_builder(root, options)?.build_parallel();
    let walked = Mutex::new(Walked::default());
    walker.run(|| Box::new(|entry| visit(root, &canonical_root, entry, &walked)));
    let mut walked = walked
        .into_inner()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    walked.files.sort();
    Ok(walked)
}

fn walk_builder(root: &Path, options: &ScanOptions) -> Result<WalkBuilder, AnalyzeError> {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(!options.include_hidden)
        .ignore(!options.no_ignore)
        .git_ignore(!options.no_ignore)
        .git_exclude(!options.no_ignore)
        .git_global(!options.no_ignore)
        .parents(!options.no_ignore)
        .require_git(false)
        // A link's target inside the root is analysed at its own path (once);
        // the link itself stays a link in any copy.
        .follow_links(false);
    if !options.excludes.is_empty() {
        let mut overrides = OverrideBuilder::new(root);
        for glob in &options.excludes {
            overrides
                .add(&format!("!{glob}"))
                .map_err(|e| AnalyzeError::Exclude {
                    glob: glob.clone(),
                    message: e.to_string(),
                })?;
        }
        let built = overrides.build().map_err(|e| AnalyzeError::Exclude {
            glob: options.excludes.join(", "),
            message: e.to_string(),
        })?;
        builder.overrides(built);
    }
    Ok(builder)
}

fn visit(
    root: &Path,
    canonical_root: &Path,
    entry: Result<ignore::DirEntry, ignore::Error>,
    walked: &Mutex<Walked>,
) -> WalkState {
    let record = |skipped: SkippedFile| {
        if let Ok(mut walked) = walked.lock() {
            walked.skipped.push(skipped);
        }
    };
    let entry = match entry {
        Ok(entry) => entry,
        Err(error) => {
            record(walk_error(root, &error));
            return WalkState::Continue;
        }
    };
    if entry.path_is_symlink() {
        if let Some(reason) = unfollowed_link(entry.path(), canonical_root) {
            record(SkippedFile {
                path: relative(root, entry.path()),
                reason,
            });
        }
        return WalkState::Continue;
    }
    let Some(file_type) = entry.file_type() else {
        return WalkState::Continue;
    };
    if file_type.is_dir() {
        return WalkState::Continue;
    }
    let name = entry.file_name().to_string_lossy();
    let language = Language::from_file_name(&name);
    // Outside the lock: a stat per file (where the walk has not read it).
    let bytes = match language {
        Some(_) if file_type.is_file() => entry.metadata().map_or(0, |m| m.len()),
        _ => 0,
    };
    if let Ok(mut walked) = walked.lock() {
        match language {
            Some(_) if !file_type.is_file() => walked.skipped.push(SkippedFile {
                path: relative(root, entry.path()),
                reason: "not a regular file (device, FIFO or socket); not read".into(),
            }),
            Some(language) => walked.files.push((entry.into_path(), language, bytes)),
            None => walked.other_files += 1,
        }
    }
    WalkState::Continue
}

/// Why a symbolic link deserves a warning: it dangles, leaves the root or
/// points back at a directory above it. A link to another path inside the
/// root needs none: its target is analysed where it is.
fn unfollowed_link(path: &Path, canonical_root: &Path) -> Option<String> {
    let Ok(target) = path.canonicalize() else {
        return Some("symbolic link to a path that does not exist; not followed".into());
    };
    if !target.starts_with(canonical_root) {
        return Some("symbolic link points outside the scanned root; not followed".into());
    }
    let parent = path.parent().and_then(|p| p.canonicalize().ok())?;
    parent.starts_with(&target).then(|| {
        format!(
            "symbolic link loop (points back to {}); not followed",
            target.display()
        )
    })
}

fn walk_error(root: &Path, error: &ignore::Error) -> SkippedFile {
    let (path, reason) = describe_walk_error(error);
    SkippedFile {
        path: path.map_or_else(|| "<walk>".to_owned(), |p| relative(root, &p)),
        reason,
    }
}

fn describe_walk_error(error: &ignore::Error) -> (Option<PathBuf>, String) {
    match error {
        ignore::Error::WithPath { path, err } => {
            let (_, reason) = describe_walk_error(err);
            (Some(path.clone()), reason)
        }
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            describe_walk_error(err)
        }
        ignore::Error::Loop { child, ancestor } => (
            Some(child.clone()),
            format!(
                "symbolic link loop (points back to {}); not followed",
                ancestor.display()
            ),
        ),
        ignore::Error::Io(io) => (None, format!("cannot read: {io}")),
        other => (None, other.to_string()),
    }
}

/// `path`'s bytes, or why it is skipped: not a regular file, over the
/// size limit, unreadable, binary or generated by cuport.
fn read_source(root: &Path, path: &Path, options: &ScanOptions) -> ReadOutcome {
    let skip = |reason: String| SkippedFile {
        path: relative(root, path),
        reason,
    };
    let metadata = std::fs::metadata(path).map_err(|e| skip(format!("cannot read: {e}")))?;
    if !metadata.is_file() {
        return Err(skip("not a regular file; not read".into()));
    }
    if metadata.len() > options.max_file_size {
        return Err(skip(format!(
            "file is {} bytes, over the size limit of {} bytes (raise it with --max-file-size)",
            metadata.len(),
            options.max_file_size
        )));
    }
    let bytes = std::fs::read(path).map_err(|e| skip(format!("cannot read: {e}")))?;
    let sniff = &bytes[..bytes.len().min(BINARY_SNIFF_LEN)];
    if let Some(offset) = sniff.iter().position(|&b| b == 0) {
        return Err(skip(format!(
            "binary file (NUL byte at offset {offset}); not analysed"
        )));
    }
    if cuport_model::is_cuport_generated(&bytes) {
        return Err(skip(
            "generated by cuport (dual-stack shim); regenerated by `cuport migrate --dual`, not analysed".into(),
        ));
    }
    Ok(SourceBytes {
        bytes,
        stat_size: metadata.len(),
    })
}

/// The analysis of the file at `path`, read already.
fn analyze_read(
    root: &Path,
    path: &Path,
    language: Language,
    read: SourceBytes,
    options: &ScanOptions,
) -> ScannedFile {
    let SourceBytes { bytes, stat_size } = read;
    let analysis = analyze_known(
        language,
        &bytes,
        &options.analyze,
        options.known_names.as_ref(),
    );
    let lines = bytes.iter().filter(|&&b| b == b'\n').count() as u64
        + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n"));
    ScannedFile {
        path: relative(root, path),
        language,
        bytes: stat_size,
        lines,
        analysis,
        source: options.keep_sources.then(|| std::sync::Arc::new(bytes)),
    }
}

/// Names the project itself defines (`cudaCheck`, `CUDA_CHECK`, a
/// `cuda_common.h` of its own) look like CUDA's but are not touchpoints.
/// Their uses are removed from the sites and counted in
/// `ScanReport::project_names`, so nothing disappears without a trace.
fn drop_project_names(report: &mut ScanReport, known: Option<&KnownNames>) {
    let known_api = |name: &str| known.is_some_and(|known| (known.is_known)(name));
    // A project's own definition of a real CUDA API (an `atomicAdd`
    // overload, a loader shim for `cuInit`) still uses CUDA through it. A
    // plain name the tables also know (`umin`) is the project's where its
    // definition is seen: everywhere when a header defines it, only in its
    // own file when a source does (cuda-samples' mergeSort_host.cpp has a
    // `static uint umin` while its kernels call CUDA's).
    let tree_wide = |file: &ScannedFile, name: &str| {
        if crate::cfamily::follows_naming_conventions(name) {
            !known_api(name)
        } else {
            is_header_path(&file.path)
        }
    };
    let defined: FxHashSet<String> = report
        .files
        .iter()
        .flat_map(|f| f.analysis.defined_names.iter().filter(|n| tree_wide(f, n)))
        .cloned()
        .collect();
    let tails = path_tails(&report.files);
    // Each file's sites on their own, in parallel: a tree has hundreds of
    // files and each many sites.
    report.project_names = report
        .files
        .par_iter_mut()
        .map(|file| drop_in_file(file, &defined, &tails))
        .reduce(BTreeMap::new, |mut all, dropped| {
            for (name, count) in dropped {
                *all.entry(name).or_default() += count;
            }
            all
        });
}

/// Drops `file`'s sites that are the project's own (`defined` tree-wide,
/// defined in the file itself, or an include of a project header) and
/// counts them by name.
fn drop_in_file(
    file: &mut ScannedFile,
    defined: &FxHashSet<String>,
    tails: &FxHashSet<String>,
) -> BTreeMap<String, usize> {
    let mut dropped: BTreeMap<String, usize> = BTreeMap::new();
    let locally_defined: FxHashSet<&str> = file
        .analysis
        .defined_names
        .iter()
        .filter(|n| !crate::cfamily::follows_naming_conventions(n))
        .map(String::as_str)
        .collect();
    file.analysis.sites.retain(|site| {
        let project = match site.kind {
            SiteKind::Include => names_a_tree_file(&site.name, tails),
            SiteKind::KernelDefinition
            | SiteKind::KernelLaunch
            | SiteKind::Qualifier
            | SiteKind::PreprocessorCondition => false,
            _ => defined.contains(&site.name) || locally_defined.contains(site.name.as_str()),
        };
        if project {
            *dropped.entry(site.name.clone()).or_default() += 1;
        }
        !project
    });
    dropped
}

/// Whether `include` names a file of the tree: what it names, without
/// leading `./` and `../`, is one of the files' path `tails`.
fn names_a_tree_file(include: &str, tails: &FxHashSet<String>) -> bool {
    let mut relative = include;
    while let Some(rest) = relative
        .strip_prefix("../")
        .or_else(|| relative.strip_prefix("./"))
    {
        relative = rest;
    }
    tails.contains(relative)
}

/// Every tail of the files' paths that starts after a `/`, and each path
/// whole.
fn path_tails(files: &[ScannedFile]) -> FxHashSet<String> {
    let mut tails = FxHashSet::default();
    for file in files {
        let path = file.path.as_str();
        tails.insert(path.to_owned());
        for (slash, _) in path.match_indices('/') {
            tails.insert(path[slash + 1..].to_owned());
        }
    }
    tails
}

/// Whether `path` names a header (shared by the files that include it).
pub fn is_header_path(path: &str) -> bool {
    let extension = path.rsplit_once('.').map_or("", |(_, e)| e);
    matches!(
        extension.to_ascii_lowercase().as_str(),
        "h" | "hh" | "hpp" | "hxx" | "cuh" | "inl" | "inc" | "tcc"
    )
}

#[cfg(test)]
mod tests {
    use super::map_largest_first;

    #[test]
    fn results_come_back_in_the_items_order_whatever_their_sizes() {
        let items: Vec<u64> = (0..500).map(|i| (i * 7919) % 1013).collect();
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .expect("a pool of three threads");
        let doubled = pool.install(|| map_largest_first(&items, |&size| size, |&size| size * 2));
        let expected: Vec<u64> = items.iter().map(|size| size * 2).collect();
        assert_eq!(doubled, expected);
    }
}
