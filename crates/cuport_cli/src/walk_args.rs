//! Which files of a tree a command reads: the flags `scan` and `migrate`
//! share.

#[derive(Debug, Clone, Default, clap::Args)]
pub(crate) struct WalkArgs {
    /// Leave out paths matching this glob (gitignore syntax); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub(crate) exclude: Vec<String>,
    /// Also read hidden files and directories.
    #[arg(long)]
    pub(crate) hidden: bool,
    /// Do not honour .gitignore and .ignore files.
    #[arg(long)]
    pub(crate) no_ignore: bool,
}
