//! Suppression markers in the source: `cuport: ignore` on a line leaves that
//! line alone; `cuport: off` ... `cuport: on` leaves a block alone.
use cuport_model::{Language, LineIndex};

#[derive(Debug, Default)]
pub(crate) struct Suppressions {
    /// Sorted, 0-based, inclusive line ranges.
    ranges: Vec<(usize, usize)>,
}

impl Suppressions {
    pub(crate) fn find(src: &[u8], lines: &LineIndex, _language: Language) -> Self {
        let mut ranges = Vec::new();
        if memchr::memmem::find(src, b"cuport:").is_none() {
            return Self { ranges };
        }
        let mut off_since: Option<usize> = None;
        for line in 0..lines.line_count() {
            let Some(range) = lines.line_range(line) else {
                break;
            };
            let text = &src[range.start..range.end];
            if contains(text, b"cuport: ignore") {
                ranges.push((line, line));
            } else if contains(text, b"cuport: off") {
                off_since.get_or_insert(line);
            } else if contains(text, b"cuport: on") {
                if let Some(start) = off_since.take() {
                    ranges.push((start, line));
                }
            }
        }
        if let Some(start) = off_since {
            ranges.push((start, lines.line_count()));
        }
        ranges.sort_unstable();
        Self { ranges }
    }

    pub(crate) fn covers(&self, line: usize) -> bool {
        self.ranges
            .iter()
            .any(|&(start, end)| start <= line && line <= end)
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    memchr::memmem::find(haystack, needle).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ignore_lines_and_off_on_blocks() {
        let src = b"a\nb // cuport: ignore\nc\n// cuport: off\nd\ne\n// cuport: on\nf\n";
        let lines = LineIndex::new(src);
        let s = Suppressions::find(src, &lines, Language::Cpp);
        let covered: Vec<usize> = (0..8).filter(|&l| s.covers(l)).collect();
        assert_eq!(covered, [1, 3, 4, 5, 6]);
    }
}
