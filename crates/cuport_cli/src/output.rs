//! Terminal conventions shared by every subcommand: colour only on a terminal
//! and never with `NO_COLOR`, `--quiet`/`--verbose`, messages on stderr, and a
//! progress bar that only appears on an interactive stderr.
use std::io::IsTerminal;

use anstyle::{AnsiColor, Style};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour when writing to a terminal and `NO_COLOR` is unset.
    Auto,
    Always,
    Never,
}

#[derive(Debug, clap::Args)]
pub(crate) struct GlobalArgs {
    /// Print only results and errors (no warnings, no progress).
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub(crate) quiet: bool,
    /// Print more detail (every warning, timing).
    #[arg(short, long, global = true)]
    pub(crate) verbose: bool,
    /// When to use colour.
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto)]
    pub(crate) color: ColorChoice,
}

/// Where and how a subcommand talks to the user.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) quiet: bool,
    pub(crate) verbose: bool,
    stdout_color: bool,
    stderr_color: bool,
    stderr_tty: bool,
}

impl Output {
    pub(crate) fn new(args: &GlobalArgs) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let decide = |tty: bool| match args.color {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => tty && !no_color,
        };
        let stderr_tty = std::io::stderr().is_terminal();
        Self {
            quiet: args.quiet,
            verbose: args.verbose,
            stdout_color: decide(std::io::stdout().is_terminal()),
            stderr_color: decide(stderr_tty),
            stderr_tty,
        }
    }

    pub(crate) fn error(&self, message: &str) {
        let style = self.err_style(AnsiColor::Red);
        eprintln!("{style}error{style:#}: {message}");
    }

    pub(crate) fn warn(&self, message: &str) {
        if !self.quiet {
            let style = self.err_style(AnsiColor::Yellow);
            eprintln!("{style}warning{style:#}: {message}");
        }
    }

    /// What a command did (files written), on stderr unless `--quiet`.
    pub(crate) fn status(&self, message: &str) {
        if !self.quiet {
            eprintln!("{message}");
        }
    }

    pub(crate) fn info(&self, message: &str) {
        if self.verbose {
            eprintln!("{message}");
        }
    }

    /// A style for stdout text, plain when colour is off.
    pub(crate) fn style(&self, color: AnsiColor, bold: bool) -> Style {
        if !self.stdout_color {
            return Style::new();
        }
        let style = Style::new().fg_color(Some(color.into()));
        if bold {
            style.bold()
        } else {
            style
        }
    }

    /// The summary heading's emphasis: what `bold()` writes, as text.
    pub(crate) fn emphasis(&self) -> cuport_report::Emphasis<'static> {
        if self.stdout_color {
            cuport_report::Emphasis {
                start: "\x1b[1m",
                end: "\x1b[0m",
            }
        } else {
            cuport_report::Emphasis::default()
        }
    }

    pub(crate) fn bold(&self) -> Style {
        if self.stdout_color {
            Style::new().bold()
        } else {
            Style::new()
        }
    }

    fn err_style(&self, color: AnsiColor) -> Style {
        if self.stderr_color {
            Style::new().fg_color(Some(color.into())).bold()
        } else {
            Style::new()
        }
    }

    /// A progress bar on stderr, hidden unless stderr is a terminal and the
    /// user did not ask for quiet output.
    pub(crate) fn progress(&self, len: u64, what: &str) -> ProgressBar {
        if self.quiet || !self.stderr_tty {
            return ProgressBar::hidden();
        }
        let bar = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
        let template = format!("{{spinner}} {what} [{{bar:30}}] {{pos}}/{{len}} {{msg}}");
        if let Ok(style) = ProgressStyle::with_template(&template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    }
}
