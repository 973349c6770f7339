//! A rule file's text, and the file once parsed: what the builder and the
//! checks read, and what a rule set keeps so that layering a user file
//! parses only that file.
use std::borrow::Cow;

use cuport_model::{LineIndex, Target};
use toml::Spanned;

use crate::diag::{DiagKind, Diagnostic, Location};
use crate::model::Flavour;
use crate::raw::RuleFile;

/// A source a rule set is built from.
#[derive(Debug, Clone)]
pub struct Source {
    /// Shown in diagnostics (`mappings/hip/runtime.toml`).
    pub name: String,
    pub text: Cow<'static, str>,
    /// Higher wins when two layers map the same name; built-ins use 0.
    pub priority: i32,
    /// Built-in files must use their target's code range; user files CP9000–CP9999.
    pub builtin: bool,
}

/// A source that parsed, with what checks need to report positions.
#[derive(Debug)]
pub(crate) struct Parsed {
    pub(crate) name: String,
    pub(crate) index: LineIndex,
    pub(crate) file: RuleFile,
    pub(crate) priority: i32,
    pub(crate) builtin: bool,
    pub(crate) source: std::sync::Arc<str>,
}

impl Parsed {
    pub(crate) fn at<T>(&self, spanned: &Spanned<T>) -> Location {
        self.at_offset(spanned.span().start)
    }

    pub(crate) fn at_offset(&self, offset: usize) -> Location {
        let lc = self.index.line_col(offset);
        Location {
            file: self.name.clone(),
            line: lc.line,
            column: lc.column,
        }
    }

    /// How many rules the file's entries, unsupported groups, patterns and
    /// enum maps make (one each).
    pub(crate) fn rule_count(&self) -> usize {
        let f = &self.file;
        f.entry.len() + f.unsupported.len() + f.pattern.len() + f.enum_map.len()
    }

    pub(crate) fn target(&self) -> Option<Target> {
        self.file.meta.target.as_ref().map(|t| *t.get_ref())
    }

    pub(crate) fn flavour(&self) -> Flavour {
        self.file
            .meta
            .flavour
            .as_ref()
            .map_or(Flavour::Default, |f| *f.get_ref())
    }
}

/// Parses one rule file; independent of every other file, so the built-in
/// files are parsed in parallel.
pub(crate) fn parse(source: &Source) -> Result<Parsed, Diagnostic> {
    let index = LineIndex::new(source.text.as_bytes());
    let stored = crate::precompiled(source).and_then(|bytes| postcard::from_bytes(bytes).ok());
    match stored.map_or_else(|| toml::from_str::<RuleFile>(&source.text), Ok) {
        Ok(file) => Ok(Parsed {
            source: file.meta.source.as_str().into(),
            name: source.name.clone(),
            index,
            file,
            priority: source.priority,
            builtin: source.builtin,
        }),
        Err(err) => {
            let offset = err.span().map_or(0, |s| s.start);
            let lc = index.line_col(offset);
            let location = Location {
                file: source.name.clone(),
                line: lc.line,
                column: lc.column,
            };
            let at = source.text.get(offset..).unwrap_or("");
            let (kind, message) = describe_parse_error(err.message().trim(), at);
            Err(Diagnostic {
                location,
                kind,
                message,
            })
        }
    }
}

/// A TOML or schema error in words a rule author acts on: a missing field
/// is `missing-field` with what to write, everything else `syntax`. `at` is
/// the text from where the error points: the TOML parser names no key in
/// its "duplicate key" message, so the key written there is named.
fn describe_parse_error(message: &str, at: &str) -> (DiagKind, String) {
    if message == "duplicate key" {
        let key = at.split(['=', '\n']).next().unwrap_or("").trim();
        return (
            DiagKind::Syntax,
            format!("duplicate key `{key}`: a table sets each key once; keep one of them"),
        );
    }
    let Some(field) = message
        .strip_prefix("missing field `")
        .and_then(|rest| rest.split('`').next())
    else {
        return (DiagKind::Syntax, message.to_owned());
    };
    let what = match field {
        "source" => "add `source = \"...\"` to [meta]: where the facts come from (vendor header, documentation page)",
        "cuda" => "every [[entry]] needs `cuda = \"NAME\"`: the CUDA name it maps",
        "status" => "every [[entry]] needs `status` (exact, renamed, rewrite, approximate, manual, unsupported)",
        "meta" => "the file needs a [meta] table (target, source, code)",
        _ => "add it (mappings/README.md lists every field)",
    };
    (
        DiagKind::MissingField,
        format!("missing field `{field}`: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::RuleSet;

    /// Every built-in file has its parsed form stored by the build script
    /// (none falls back to parsing TOML at each run), and that form reads
    /// back as the very file the TOML parses to, spans included (`Spanned`'s
    /// `Debug` prints them).
    #[test]
    fn stored_tables_read_back_as_their_toml() {
        let sources = RuleSet::builtin_sources();
        for source in &sources {
            // The build script leaves out (with a warning) a file whose
            // stored form would not read back: a type postcard cannot hold,
            // such as a `toml::Value` in a `[[kernel]]` table.
            let Some(bytes) = crate::precompiled(source) else {
                panic!(
                    "{}: no stored form; see the build script's warning",
                    source.name
                );
            };
            let stored: RuleFile = postcard::from_bytes(bytes).expect("stored form reads");
            let parsed: RuleFile = toml::from_str(&source.text).expect("built-in parses");
            assert_eq!(
                format!("{stored:?}"),
                format!("{parsed:?}"),
                "{}",
                source.name
            );
        }
    }

    /// A text that only carries a built-in file's name is parsed as written.
    #[test]
    fn a_replaced_builtin_text_is_parsed_from_its_toml() {
        let mut source = RuleSet::builtin_sources().swap_remove(0);
        source.text = Cow::Owned(format!("{}\n", source.text));
        assert!(crate::precompiled(&source).is_none());
        source.text = Cow::Owned("[meta]\n".to_owned());
        let err = parse(&source).expect_err("the replaced text has no source");
        assert_eq!(err.location.line, 1, "{err:?}");
    }
}
