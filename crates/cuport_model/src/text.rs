use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A half-open byte range `[start, end)` into one file's original bytes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub struct TextRange {
    pub start: usize,
    pub end: usize,
}

impl TextRange {
    pub fn new(start: usize, end: usize) -> Self {
        debug_assert!(start <= end, "range start {start} after end {end}");
        Self { start, end }
    }

    pub fn len(self) -> usize {
        self.end - self.start
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    pub fn contains(self, offset: usize) -> bool {
        self.start <= offset && offset < self.end
    }

    /// The text this range covers, or `None` when it does not fall on
    /// character boundaries of `text` (never panics on foreign ranges).
    pub fn slice(self, text: &str) -> Option<&str> {
        text.get(self.start..self.end)
    }
}

/// A 1-based line and 1-based column (in bytes), as editors and SARIF expect.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
pub struct LineCol {
    pub line: u32,
    pub column: u32,
}

/// Maps byte offsets to lines and columns. Built once per file; lookups are a
/// binary search over line starts.
#[derive(Debug, Clone, Default)]
pub struct LineIndex {
    line_starts: Vec<usize>,
    len: usize,
}

impl LineIndex {
    /// Indexes `text`. Lines end at `\n`; a `\r` before it belongs to the line,
    /// so CRLF files get the same line numbers as LF files.
    pub fn new(text: &[u8]) -> Self {
        let mut line_starts = Vec::with_capacity(text.len() / 32 + 1);
        line_starts.push(0);
        line_starts.extend(memchr_newlines(text).map(|i| i + 1));
        Self {
            line_starts,
            len: text.len(),
        }
    }

    /// The length of the text indexed, in bytes.
    pub fn text_len(&self) -> usize {
        self.len
    }

    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }

    /// Line and column of `offset`; offsets past the end clamp to the end.
    pub fn line_col(&self, offset: usize) -> LineCol {
        let offset = offset.min(self.len);
        let line = self.line_of(offset);
        let column = offset - self.line_starts[line];
        LineCol {
            line: to_u32(line + 1),
            column: to_u32(column + 1),
        }
    }

    /// 0-based line number of `offset`.
    pub fn line_of(&self, offset: usize) -> usize {
        match self.line_starts.binary_search(&offset) {
            Ok(line) => line,
            Err(next) => next - 1,
        }
    }

    /// Byte range of 0-based `line` including its terminator, if it exists.
    pub fn line_range(&self, line: usize) -> Option<TextRange> {
        let start = *self.line_starts.get(line)?;
        let end = self.line_starts.get(line + 1).copied().unwrap_or(self.len);
        Some(TextRange::new(start, end))
    }
}

/// Every line is indexed twice per run (analysis and rewrite; the report
/// reuses the rewrite's index): a vectorised search, not a byte loop.
fn memchr_newlines(text: &[u8]) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b'\n', text)
}

fn to_u32(value: usize) -> u32 {
    u32::try_from(value).unwrap_or(u32::MAX)
}

/// Whether a dotted path is `module` or lies below it (`flash_attn.ops`
/// in `flash_attn`, not `flash_attnx`).
pub fn dotted_within(path: &str, module: &str) -> bool {
    path.strip_prefix(module)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_is_one_based_and_crlf_neutral() {
        let index = LineIndex::new(b"ab\r\ncd\nef");
        assert_eq!(index.line_col(0), LineCol { line: 1, column: 1 });
        assert_eq!(index.line_col(4), LineCol { line: 2, column: 1 });
        assert_eq!(index.line_col(8), LineCol { line: 3, column: 2 });
        assert_eq!(index.line_col(100), LineCol { line: 3, column: 3 });
        assert_eq!(index.line_count(), 3);
    }

    #[test]
    fn slice_refuses_ranges_off_char_boundaries() {
        let text = "é";
        assert_eq!(TextRange::new(0, 1).slice(text), None);
        assert_eq!(TextRange::new(0, 2).slice(text), Some("é"));
    }
}
