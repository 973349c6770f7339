//! What a `migrate` run writes, where, in which format, and when it fails:
//! resolved from the command line once into plain types, so the steps of the
//! command never read clap's arguments (`settings` resolves what shapes the
//! port; this resolves what happens to it).
use std::path::{Path, PathBuf};

use cuport_rewrite::{InPlace, Level};

/// Where the port goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Destination {
    /// Nothing is written: diagnostics and the summary only.
    Nowhere,
    /// A unified diff on stdout, nothing written.
    Diff,
    /// A ported copy of the tree under this directory.
    Tree(PathBuf),
    /// The sources themselves, atomically.
    InPlace(InPlace),
    /// The one source file into this file.
    File(PathBuf),
}

/// What goes to stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StdoutFormat {
    /// Diagnostics and the summary (the diff with [`Destination::Diff`]).
    Text,
    /// The report document as JSON, diffs included.
    Json,
}

/// Which files of the tree are read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Walk {
    pub(crate) hidden: bool,
    pub(crate) no_ignore: bool,
}

/// Everything about a migrate run that is not the port itself.
#[derive(Debug, Clone)]
pub(crate) struct RunPlan {
    /// The directory or file migrated.
    pub(crate) path: PathBuf,
    pub(crate) destination: Destination,
    pub(crate) stdout: StdoutFormat,
    /// Where the review reports go, if anywhere.
    pub(crate) report_dir: Option<PathBuf>,
    /// Exit 1 when a diagnostic at this level or above remains.
    pub(crate) fail_on: Option<Level>,
    pub(crate) walk: Walk,
    /// Write an Ascend C skeleton per kernel (only with a tree copy).
    pub(crate) kernel_skeletons: bool,
    /// Rename sources to the target's conventions.
    pub(crate) rename_sources: bool,
    /// Propose `[[kernel]]` rules, run their evidence and apply the
    /// confirmed ones in this run.
    pub(crate) verify_kernels: bool,
}

impl RunPlan {
    /// Whether the run writes ported files (a copy, in place or one file).
    pub(crate) fn writes(&self) -> bool {
        matches!(
            self.destination,
            Destination::Tree(_) | Destination::InPlace(_) | Destination::File(_)
        )
    }

    /// Whether the run reproduces the whole tree the scan lists (a copy, or
    /// in place).
    pub(crate) fn writes_every_file(&self) -> bool {
        matches!(
            self.destination,
            Destination::Tree(_) | Destination::InPlace(_)
        )
    }

    /// Whether the written result is a tree (a copy, or a directory
    /// rewritten in place), which renamed sources need.
    pub(crate) fn writes_tree(&self) -> bool {
        match self.destination {
            Destination::Tree(_) => true,
            Destination::InPlace(_) => self.path.is_dir(),
            _ => false,
        }
    }

    /// The copy's directory, where kernel skeletons are written.
    pub(crate) fn skeleton_dir(&self) -> Option<&Path> {
        match (&self.destination, self.kernel_skeletons) {
            (Destination::Tree(dir), true) => Some(dir),
            _ => None,
        }
    }

    /// Whether the document carries diffs: they go to stdout as JSON or to
    /// the review reports.
    pub(crate) fn shows_diffs(&self) -> bool {
        self.stdout == StdoutFormat::Json || self.report_dir.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(destination: Destination) -> RunPlan {
        RunPlan {
            path: PathBuf::from("."),
            destination,
            stdout: StdoutFormat::Text,
            report_dir: None,
            fail_on: None,
            walk: Walk::default(),
            kernel_skeletons: true,
            rename_sources: false,
            verify_kernels: false,
        }
    }

    #[test]
    fn only_a_copy_takes_skeletons() {
        let copy = plan(Destination::Tree(PathBuf::from("out")));
        assert_eq!(copy.skeleton_dir(), Some(Path::new("out")));
        assert!(copy.writes() && copy.writes_every_file() && copy.writes_tree());
        let diff = plan(Destination::Diff);
        assert_eq!(diff.skeleton_dir(), None);
        assert!(!diff.writes() && !diff.writes_tree());
        let file = plan(Destination::File(PathBuf::from("a.cu")));
        assert!(file.writes() && !file.writes_every_file() && !file.writes_tree());
    }

    #[test]
    fn diffs_are_kept_for_json_and_reports() {
        let mut run = plan(Destination::Nowhere);
        assert!(!run.shows_diffs());
        run.report_dir = Some(PathBuf::from("review"));
        assert!(run.shows_diffs());
        run.report_dir = None;
        run.stdout = StdoutFormat::Json;
        assert!(run.shows_diffs());
    }
}
