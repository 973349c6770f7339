//! The one type of a diagnostic or rule code (`CP` and four digits) and the
//! effort scale every stage shares, so a code read from a rule table, written
//! by the rewriter and shown in a report is the same value throughout.
use std::ops::RangeInclusive;

use schemars::{json_schema, JsonSchema, Schema, SchemaGenerator};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::ids::id_enum;
use crate::{Library, Target};

/// A stable code, `CP` and four digits. Ranges: see `mappings/README.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Code(u16);

impl Code {
    /// Codes users may give their own rules.
    pub const USER_RANGE: RangeInclusive<u16> = 9000..=9999;

    /// `CP` and four digits, or `None`.
    pub fn parse(text: &str) -> Option<Code> {
        let digits = text.strip_prefix("CP")?;
        if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        digits.parse().ok().map(Code)
    }

    /// A code written in the source as a literal (`"CP0001"`); a malformed
    /// literal stops the build, as it is only called in constants.
    pub const fn from_literal(text: &str) -> Code {
        let bytes = text.as_bytes();
        assert!(bytes.len() == 6 && bytes[0] == b'C' && bytes[1] == b'P');
        let mut number = 0u16;
        let mut at = 2;
        while at < 6 {
            assert!(bytes[at].is_ascii_digit());
            number = number * 10 + (bytes[at] - b'0') as u16;
            at += 1;
        }
        Code(number)
    }

    pub fn number(self) -> u16 {
        self.0
    }

    /// Whether the number is in `range` (a target and library's block).
    pub fn is_in(self, range: &RangeInclusive<u16>) -> bool {
        range.contains(&self.0)
    }

    /// The range a built-in code for `target` and `library` must fall in:
    /// the thousands digit is the target's (`code-digit` in its
    /// target.toml), the hundreds the library family's (`code-family` in
    /// mappings/libraries.toml).
    pub fn range_for(target: Target, library: Library) -> RangeInclusive<u16> {
        let base = 1000 * target.profile().target.code_digit + 100 * library_digit(library);
        base..=base + 99
    }
}

/// Hundreds digit of a code: one block per library family.
fn library_digit(library: Library) -> u16 {
    library.profile().code_family
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CP{:04}", self.0)
    }
}

/// A code equals its text (`code == "CP0001"`), as reports and tests write it.
impl PartialEq<str> for Code {
    fn eq(&self, text: &str) -> bool {
        Code::parse(text) == Some(*self)
    }
}

impl PartialEq<&str> for Code {
    fn eq(&self, text: &&str) -> bool {
        self == *text
    }
}

impl Serialize for Code {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Code::parse(&text).ok_or_else(|| {
            serde::de::Error::custom(format!("`{text}` is not a code: write CP and four digits"))
        })
    }
}

impl JsonSchema for Code {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Code".into()
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "description": "A stable code, CP and four digits.",
            "type": "string",
            "pattern": "^CP[0-9]{4}$"
        })
    }
}

id_enum! {
    /// How much work is left at a spot, lowest first. Rule tables use the
    /// first three; `included` is cuport's own, for a site whose work is
    /// counted once with the enclosing kernel or helper.
    pub enum Effort {
        /// Minutes: a local edit with a known recipe.
        Low = "low",
        /// Hours: restructure a call site or a small kernel.
        Medium = "medium",
        /// Days: a redesign, such as a kernel rewritten by hand.
        High = "high",
        /// Part of an enclosing kernel's or helper's port, counted once with it.
        Included = "included",
    }
}

impl std::fmt::Display for Effort {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_parse_and_print() {
        assert_eq!(Code::parse("CP2041"), Some(Code(2041)));
        assert_eq!(Code(7).to_string(), "CP0007");
        assert_eq!(Code::parse("CP204"), None);
        assert_eq!(Code::parse("XX2041"), None);
        assert_eq!(Code::from_literal("CP0042"), Code(42));
    }

    #[test]
    fn codes_are_strings_in_json() {
        let json = serde_json::to_string(&Code(1021)).unwrap_or_default();
        assert_eq!(json, "\"CP1021\"");
        let back: Result<Code, _> = serde_json::from_str("\"CP1021\"");
        assert_eq!(back.ok(), Some(Code(1021)));
        assert!(serde_json::from_str::<Code>("\"CP12\"").is_err());
    }

    #[test]
    fn ranges_follow_target_then_library() {
        assert_eq!(Code::range_for(Target::Ascend, Library::Nccl), 2600..=2699);
        assert_eq!(Code::range_for(Target::Hip, Library::Runtime), 1000..=1099);
    }
}
