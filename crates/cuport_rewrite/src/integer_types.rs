//! The C++ integer type of an expression, as far as the source text alone
//! settles it, for passes whose rewrite depends on whether an argument is
//! signed or unsigned (CUDA's mixed-sign `min`/`max`). The data model is
//! LP64 (Linux: `long` is 64 bits). What the text does not settle has no
//! type here: a call, a member other than a built-in coordinate, a macro, a
//! floating-point operand, a name declared with two different types. A
//! pass that gets no type leaves the code alone.
use std::collections::BTreeMap;

use cuport_model::TextRange;

use crate::source_text::{declared_variables, function_regions, region_at, word_at};

/// An integer type after the integral promotions (`short` and `char` are
/// `int` in arithmetic).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct IntegerType {
    rank: Rank,
    unsigned: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    Int,
    Long,
    LongLong,
}

/// Type names that are not C++ keywords but name integer types
/// (`<cstdint>`, `<cstddef>`, glibc's `uint`), as glibc defines them on
/// LP64.
const TYPEDEFS: [(&str, &str); 16] = [
    ("size_t", "unsigned long"),
    ("ssize_t", "long"),
    ("ptrdiff_t", "long"),
    ("intptr_t", "long"),
    ("uintptr_t", "unsigned long"),
    ("int8_t", "int"),
    ("int16_t", "int"),
    ("int32_t", "int"),
    ("int64_t", "long"),
    ("uint8_t", "int"),
    ("uint16_t", "int"),
    ("uint32_t", "unsigned int"),
    ("uint64_t", "unsigned long"),
    ("uint", "unsigned int"),
    ("ulong", "unsigned long"),
    ("ushort", "int"),
];

/// Words that may stand before a declared name without changing whether
/// it holds an integer.
const QUALIFIERS: [&str; 7] = [
    "const",
    "volatile",
    "static",
    "register",
    "constexpr",
    "__restrict__",
    "extern",
];

impl IntegerType {
    const INT: IntegerType = IntegerType {
        rank: Rank::Int,
        unsigned: false,
    };
    const UNSIGNED_INT: IntegerType = IntegerType {
        rank: Rank::Int,
        unsigned: true,
    };
    const LONG: IntegerType = IntegerType {
        rank: Rank::Long,
        unsigned: false,
    };

    /// The type a spelling names (`unsigned`, `long int`, `size_t`,
    /// `const unsigned short`), promoted; `None` for anything else.
    pub(crate) fn parse(spelling: &str) -> Option<IntegerType> {
        let words: Vec<&str> = spelling
            .split_whitespace()
            .filter(|w| !QUALIFIERS.contains(w))
            .collect();
        if let [word] = words.as_slice() {
            if let Some((_, named)) = TYPEDEFS.iter().find(|(name, _)| name == word) {
                return IntegerType::parse(named);
            }
        }
        IntegerType::from_keywords(&words)
    }

    fn from_keywords(words: &[&str]) -> Option<IntegerType> {
        let (mut longs, mut unsigned, mut signed, mut small, mut int) =
            (0, false, false, false, false);
        for word in words {
            match *word {
                "long" => longs += 1,
                "unsigned" => unsigned = true,
                "signed" => signed = true,
                "short" | "char" | "bool" => small = true,
                "int" => int = true,
                _ => return None,
            }
        }
        let conflicting =
            (unsigned && signed) || (small && (longs > 0 || int && words.contains(&"char")));
        if words.is_empty() || conflicting || longs > 2 {
            return None;
        }
        // `unsigned short` and `unsigned char` promote to `int`, which holds
        // all their values.
        Some(match (longs, small) {
            (_, true) => IntegerType::INT,
            (0, false) => IntegerType {
                rank: Rank::Int,
                unsigned,
            },
            (1, false) => IntegerType {
                rank: Rank::Long,
                unsigned,
            },
            _ => IntegerType {
                rank: Rank::LongLong,
                unsigned,
            },
        })
    }

    pub(crate) fn is_unsigned(self) -> bool {
        self.unsigned
    }

    /// How C++ spells the type (`unsigned long long`).
    pub(crate) fn spelling(self) -> &'static str {
        match (self.rank, self.unsigned) {
            (Rank::Int, false) => "int",
            (Rank::Int, true) => "unsigned int",
            (Rank::Long, false) => "long",
            (Rank::Long, true) => "unsigned long",
            (Rank::LongLong, false) => "long long",
            (Rank::LongLong, true) => "unsigned long long",
        }
    }

    /// The usual arithmetic conversions of two promoted integer types
    /// (LP64: `long` and `long long` are both 64 bits).
    fn common(self, other: IntegerType) -> IntegerType {
        if self.unsigned == other.unsigned {
            return if self.rank >= other.rank { self } else { other };
        }
        let (signed, unsigned) = if self.unsigned {
            (other, self)
        } else {
            (self, other)
        };
        if unsigned.rank >= signed.rank {
            unsigned
        } else if signed.bits() > unsigned.bits() {
            signed
        } else {
            IntegerType {
                rank: signed.rank,
                unsigned: true,
            }
        }
    }

    fn bits(self) -> u32 {
        match self.rank {
            Rank::Int => 32,
            Rank::Long | Rank::LongLong => 64,
        }
    }
}

/// The integer types of the names a file declares (`int n` in a parameter
/// list, `const unsigned u = 4;`, `size_t a, b;`). A name used in a
/// function has a type where every declaration of it in that function
/// says the same integer type, or, where the function declares it not at
/// all, every declaration outside functions does.
pub(crate) struct DeclaredIntegers<'s> {
    /// Per function region (None: outside functions), each name's type,
    /// None where declarations disagree or one is no scalar integer.
    names: BTreeMap<(Option<TextRange>, &'s str), Option<IntegerType>>,
    regions: Vec<TextRange>,
    /// The built-in variables whose `.x`/`.y`/`.z` are CUDA's
    /// `unsigned int` (`threadIdx`, `blockDim`).
    coordinates: &'s [String],
}

impl<'s> DeclaredIntegers<'s> {
    #[cfg(test)]
    pub(crate) fn of(src: &'s [u8], coordinates: &'s [String]) -> DeclaredIntegers<'s> {
        let words = crate::source_text::code_words(src, 0, src.len());
        Self::of_words(src, &words, coordinates)
    }

    /// [`Self::of`] with the `words` of `src` already found
    /// (`FileInput::code_words`).
    pub(crate) fn of_words(
        src: &'s [u8],
        words: &[(usize, &'s str)],
        coordinates: &'s [String],
    ) -> DeclaredIntegers<'s> {
        let regions = function_regions(src);
        let mut names: BTreeMap<(Option<TextRange>, &'s str), Option<IntegerType>> =
            BTreeMap::new();
        let mut k = 0;
        while k < words.len() {
            let run = type_run(&words[k..]);
            if run == 0 {
                k += 1;
                continue;
            }
            let (at, last) = words[k + run - 1];
            let spelling: Vec<&str> = words[k..k + run].iter().map(|(_, w)| *w).collect();
            let ty = IntegerType::parse(&spelling.join(" "));
            let type_end = at + last.len();
            for name in declared_variables(src, type_end) {
                let offset = name.as_ptr() as usize - src.as_ptr() as usize;
                let scalar = ty.filter(|_| is_scalar_declarator(src, type_end, offset, name));
                names
                    .entry((region_at(&regions, offset), name))
                    .and_modify(|known| {
                        if *known != scalar {
                            *known = None;
                        }
                    })
                    .or_insert(scalar);
            }
            k += run;
        }
        DeclaredIntegers {
            names,
            regions,
            coordinates,
        }
    }

    /// The type of the expression `text`, written at `at` in the file, if
    /// the text settles it.
    pub(crate) fn type_of(&self, text: &[u8], at: usize) -> Option<IntegerType> {
        let tokens = tokens(text)?;
        let mut parser = Parser {
            tokens: &tokens,
            at: 0,
            declared: self,
            function: region_at(&self.regions, at),
        };
        let ty = parser.binary(0)?;
        (parser.at == tokens.len()).then_some(ty)
    }

    fn declared(&self, function: Option<TextRange>, name: &str) -> Option<IntegerType> {
        match self.names.get(&(function, name)) {
            Some(local) => *local,
            None if function.is_some() => self.names.get(&(None, name)).copied().flatten(),
            None => None,
        }
    }
}

/// How many words from the start of `words` spell a type (qualifiers
/// included) that may be an integer type: 0 when the first is none.
fn type_run(words: &[(usize, &str)]) -> usize {
    const KEYWORDS: [&str; 7] = ["int", "unsigned", "signed", "long", "short", "char", "bool"];
    let is_type_word = |w: &str| {
        KEYWORDS.contains(&w) || QUALIFIERS.contains(&w) || TYPEDEFS.iter().any(|(t, _)| *t == w)
    };
    let run = words.iter().take_while(|(_, w)| is_type_word(w)).count();
    let named = words[..run].iter().any(|(_, w)| !QUALIFIERS.contains(w));
    if named {
        run
    } else {
        0
    }
}

/// Whether the declarator that declares `name` at `offset` (after a type
/// ending at `type_end`) makes it a scalar: no `*` before it, no `[` or
/// `(` after it.
fn is_scalar_declarator(src: &[u8], type_end: usize, offset: usize, name: &str) -> bool {
    let declarator_start = src[type_end..offset]
        .iter()
        .rposition(|&b| b == b',')
        .map_or(type_end, |i| type_end + i + 1);
    let pointer = src[declarator_start..offset].contains(&b'*');
    let after = src[offset + name.len()..]
        .iter()
        .find(|b| !b.is_ascii_whitespace());
    !pointer && !matches!(after, Some(b'[' | b'('))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token<'t> {
    Word(&'t str),
    Number(&'t str),
    Punct(&'t str),
}

/// The tokens of an expression; `None` where it holds a literal string or
/// character, a comment or a directive (nothing such is typed here).
fn tokens(text: &[u8]) -> Option<Vec<Token<'_>>> {
    const OPERATORS: [&str; 13] = [
        "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "->", "::", "++", "--", "...",
    ];
    let text = std::str::from_utf8(text).ok()?;
    let mut out = Vec::new();
    let mut at = 0;
    let bytes = text.as_bytes();
    while at < bytes.len() {
        let b = bytes[at];
        let rest = &text[at..];
        if b.is_ascii_whitespace() {
            at += 1;
        } else if matches!(b, b'"' | b'\'' | b'#')
            || rest.starts_with("//")
            || rest.starts_with("/*")
        {
            return None;
        } else if b.is_ascii_digit()
            || (b == b'.' && bytes.get(at + 1).is_some_and(u8::is_ascii_digit))
        {
            let len = number_length(bytes, at);
            out.push(Token::Number(&text[at..at + len]));
            at += len;
        } else if let Some(word) = word_at(bytes, at) {
            out.push(Token::Word(word));
            at += word.len();
        } else {
            let len = OPERATORS
                .iter()
                .find(|op| rest.starts_with(**op))
                .map_or(1, |op| op.len());
            out.push(Token::Punct(rest.get(..len)?));
            at += len;
        }
    }
    Some(out)
}

/// The length of the numeric literal at `at` (digits, letters, `.`, `'`,
/// and an exponent's sign).
fn number_length(bytes: &[u8], at: usize) -> usize {
    let mut end = at;
    while end < bytes.len() {
        let b = bytes[end];
        let exponent_sign = matches!(b, b'+' | b'-')
            && end > at
            && matches!(bytes[end - 1], b'e' | b'E' | b'p' | b'P')
            && !bytes[at..end].starts_with(b"0x");
        if b.is_ascii_alphanumeric() || b == b'.' || b == b'\'' || exponent_sign {
            end += 1;
        } else {
            break;
        }
    }
    end - at
}

/// The type of an integer literal (`4`, `4u`, `0xffffffff`, `1ull`);
/// `None` for a floating literal.
fn literal_type(literal: &str) -> Option<IntegerType> {
    let literal = literal.replace('\'', "");
    let lower = literal.to_ascii_lowercase();
    let (digits, radix) = if let Some(hex) = lower.strip_prefix("0x") {
        (hex, 16)
    } else if let Some(binary) = lower.strip_prefix("0b") {
        (binary, 2)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (&lower[1..], 8)
    } else {
        (lower.as_str(), 10)
    };
    let suffix_at = digits
        .find(|c: char| !c.is_digit(radix))
        .unwrap_or(digits.len());
    let (value, suffix) = digits.split_at(suffix_at);
    let value = if value.is_empty() && radix == 8 {
        0
    } else {
        u64::from_str_radix(value, radix).ok()?
    };
    let unsigned = suffix.contains('u');
    let longs = suffix.matches('l').count();
    if suffix.chars().any(|c| c != 'u' && c != 'l') || longs > 2 {
        return None;
    }
    // The first type of the literal's list that holds the value
    // ([lex.icon]): decimal literals without `u` stay signed.
    let decimal = radix == 10;
    let candidates: &[IntegerType] = &[
        IntegerType::INT,
        IntegerType::UNSIGNED_INT,
        IntegerType::LONG,
        IntegerType {
            rank: Rank::Long,
            unsigned: true,
        },
        IntegerType {
            rank: Rank::LongLong,
            unsigned: false,
        },
        IntegerType {
            rank: Rank::LongLong,
            unsigned: true,
        },
    ];
    let minimum_rank = match longs {
        0 => Rank::Int,
        1 => Rank::Long,
        _ => Rank::LongLong,
    };
    candidates.iter().copied().find(|ty| {
        let allowed = if unsigned {
            ty.unsigned
        } else {
            !(decimal && ty.unsigned)
        };
        let fits = if ty.unsigned {
            ty.bits() == 64 || value <= u64::from(u32::MAX)
        } else {
            value
                <= if ty.bits() == 64 {
                    i64::MAX as u64
                } else {
                    i32::MAX as u64
                }
        };
        allowed && ty.rank >= minimum_rank && fits
    })
}

/// A precedence-climbing reader of the integer operators.
struct Parser<'t, 'd> {
    tokens: &'t [Token<'t>],
    at: usize,
    declared: &'d DeclaredIntegers<'d>,
    /// The function the expression is in (None: outside functions).
    function: Option<TextRange>,
}

/// Binary operators by precedence, loosest first (the additive and
/// multiplicative ones are read by their own functions).
const LEVELS: [&[&str]; 8] = [
    &["||"],
    &["&&"],
    &["|"],
    &["^"],
    &["&"],
    &["==", "!="],
    &["<", ">", "<=", ">="],
    &["<<", ">>"],
];

impl<'t> Parser<'t, '_> {
    fn peek(&self) -> Option<Token<'t>> {
        self.tokens.get(self.at).copied()
    }

    fn eat(&mut self, punct: &str) -> bool {
        let found = self.peek() == Some(Token::Punct(punct));
        if found {
            self.at += 1;
        }
        found
    }

    fn binary(&mut self, level: usize) -> Option<IntegerType> {
        if level == LEVELS.len() {
            return self.additive();
        }
        let mut left = self.binary(level + 1)?;
        while let Some(Token::Punct(op)) = self.peek() {
            if !LEVELS[level].contains(&op) {
                break;
            }
            self.at += 1;
            let right = self.binary(level + 1)?;
            left = match op {
                "||" | "&&" | "==" | "!=" | "<" | ">" | "<=" | ">=" => IntegerType::INT,
                // A shift has its left operand's (promoted) type.
                "<<" | ">>" => left,
                _ => left.common(right),
            };
        }
        Some(left)
    }

    /// `+ -` over `* / %`.
    fn additive(&mut self) -> Option<IntegerType> {
        let mut left = self.multiplicative()?;
        while self.eat("+") || self.eat("-") {
            left = left.common(self.multiplicative()?);
        }
        Some(left)
    }

    fn multiplicative(&mut self) -> Option<IntegerType> {
        let mut left = self.unary()?;
        while self.eat("*") || self.eat("/") || self.eat("%") {
            left = left.common(self.unary()?);
        }
        Some(left)
    }

    fn unary(&mut self) -> Option<IntegerType> {
        if self.eat("-") || self.eat("+") || self.eat("~") {
            return self.unary();
        }
        if self.eat("!") {
            self.unary()?;
            return Some(IntegerType::INT);
        }
        if let Some(ty) = self.cast()? {
            return Some(ty);
        }
        self.primary()
    }

    /// `(unsigned int)x`: `Some(Some(type))`; `Some(None)` when no cast
    /// starts here; `None` for a cast to a type that is no integer.
    fn cast(&mut self) -> Option<Option<IntegerType>> {
        if self.peek() != Some(Token::Punct("(")) {
            return Some(None);
        }
        let words: Vec<&str> = self.tokens[self.at + 1..]
            .iter()
            .map_while(|t| match t {
                Token::Word(w) => Some(*w),
                _ => None,
            })
            .collect();
        let closes = self.tokens.get(self.at + 1 + words.len()) == Some(&Token::Punct(")"));
        let is_type = !words.is_empty()
            && type_run(&words.iter().map(|w| (0, *w)).collect::<Vec<_>>()) == words.len();
        if !(closes && is_type) {
            return Some(None);
        }
        self.at += words.len() + 2;
        self.unary()?;
        IntegerType::parse(&words.join(" ")).map(Some)
    }

    fn primary(&mut self) -> Option<IntegerType> {
        match self.peek()? {
            Token::Number(literal) => {
                self.at += 1;
                literal_type(literal)
            }
            Token::Punct("(") => {
                self.at += 1;
                let ty = self.binary(0)?;
                self.eat(")").then_some(ty)
            }
            Token::Word("static_cast") => self.named_cast(),
            Token::Word(name) => {
                self.at += 1;
                self.name(name)
            }
            Token::Punct(_) => None,
        }
    }

    /// `static_cast<unsigned>(x)`.
    fn named_cast(&mut self) -> Option<IntegerType> {
        self.at += 1;
        if !self.eat("<") {
            return None;
        }
        let mut words = Vec::new();
        while let Some(Token::Word(w)) = self.peek() {
            words.push(w);
            self.at += 1;
        }
        if !self.eat(">") || self.peek() != Some(Token::Punct("(")) {
            return None;
        }
        self.primary()?;
        IntegerType::parse(&words.join(" "))
    }

    /// A name: a built-in coordinate member (`blockDim.x`, CUDA's
    /// `unsigned int`), or a variable whose declarations agree; a name
    /// followed by a call, index or member access has no type here.
    fn name(&mut self, name: &str) -> Option<IntegerType> {
        if self.declared.coordinates.iter().any(|c| c == name) {
            let member = self.eat(".") && matches!(self.peek(), Some(Token::Word("x" | "y" | "z")));
            self.at += 1;
            return member.then_some(IntegerType::UNSIGNED_INT);
        }
        if matches!(
            self.peek(),
            Some(Token::Punct("(" | "[" | "." | "->" | "::" | "++" | "--"))
        ) {
            return None;
        }
        self.declared.declared(self.function, name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The type of `expression` as if written at the end of `src`'s last
    /// function (before its closing brace).
    fn type_in(src: &str, expression: &str) -> Option<&'static str> {
        let coordinates = ["threadIdx".to_owned(), "blockDim".to_owned()];
        let declared = DeclaredIntegers::of(src.as_bytes(), &coordinates);
        let at = src.rfind('}').unwrap_or(0);
        declared
            .type_of(expression.as_bytes(), at)
            .map(IntegerType::spelling)
    }

    #[test]
    fn spellings_parse_to_promoted_types() {
        let cases = [
            ("unsigned", Some("unsigned int")),
            ("long int", Some("long")),
            ("unsigned long long int", Some("unsigned long long")),
            ("const unsigned short", Some("int")),
            ("size_t", Some("unsigned long")),
            ("int64_t", Some("long")),
            ("float", None),
            ("signed unsigned", None),
        ];
        for (spelling, expected) in cases {
            assert_eq!(
                IntegerType::parse(spelling).map(IntegerType::spelling),
                expected,
                "{spelling}"
            );
        }
    }

    #[test]
    fn literals_take_the_first_type_that_holds_them() {
        let cases = [
            ("4", Some("int")),
            ("4u", Some("unsigned int")),
            ("4ul", Some("unsigned long")),
            ("4LL", Some("long long")),
            ("0xffffffff", Some("unsigned int")),
            ("4294967295", Some("long")),
            ("0", Some("int")),
            ("1'000", Some("int")),
            ("1.0f", None),
            ("1e5", None),
        ];
        for (literal, expected) in cases {
            assert_eq!(
                literal_type(literal).map(IntegerType::spelling),
                expected,
                "{literal}"
            );
        }
    }

    #[test]
    fn expressions_follow_the_usual_arithmetic_conversions() {
        let src = "__global__ void k(float* x, int C, unsigned n, size_t s, long l) {\n\
                   \x20 int i = threadIdx.x, j = 0; const int u = 4; float f;\n}\n";
        let cases = [
            ("C - 1", Some("int")),
            ("i + u*blockDim.x", Some("unsigned int")),
            ("n + l", Some("long")),
            ("s + l", Some("unsigned long")),
            ("(int)n", Some("int")),
            ("static_cast<unsigned int>(C)", Some("unsigned int")),
            ("C << 2u", Some("int")),
            ("C < n", Some("int")),
            ("-n", Some("unsigned int")),
            ("(C + 1) * 2", Some("int")),
            ("j", Some("int")),
            ("f + 1", None),
            ("x[0]", None),
            ("foo(C)", None),
            ("C ? n : 1", None),
            ("threadIdx", None),
            ("unknown", None),
        ];
        for (expression, expected) in cases {
            assert_eq!(type_in(src, expression), expected, "{expression}");
        }
    }

    #[test]
    fn a_name_has_its_functions_type_or_else_the_files() {
        let src = "const long g = 1;\nint shadowed = 0;\nvoid a(int n) {}\nvoid b(unsigned n) {}\n\
                   void c(int m, int* p, int q[4]) { unsigned shadowed = 2; int k = m; { long k = 0; } }\n";
        assert_eq!(type_in(src, "n"), None, "declared in other functions only");
        assert_eq!(type_in(src, "m"), Some("int"));
        assert_eq!(type_in(src, "g"), Some("long"));
        assert_eq!(type_in(src, "shadowed"), Some("unsigned int"));
        assert_eq!(type_in(src, "k"), None, "two types in one function");
        assert_eq!(type_in(src, "p"), None);
        assert_eq!(type_in(src, "q"), None);
    }

    /// The typer against g++ (the reference): random integer expressions
    /// over variables of every integer type, literals, casts and built-in
    /// coordinates, each checked with `static_assert(std::is_same<decltype(
    /// +(expression)), type>)` in one file that the typer reads too. Unary
    /// `+` applies the promotions the typer's types already have.
    #[test]
    #[allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
    fn types_agree_with_gcc_on_random_expressions() {
        use proptest::prelude::*;
        use proptest::strategy::ValueTree;
        use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

        const LEAVES: [&str; 22] = [
            "i",
            "u",
            "l",
            "ul",
            "ll",
            "ull",
            "s",
            "us",
            "c",
            "sz",
            "i64",
            "u32",
            "3",
            "3u",
            "3l",
            "3ul",
            "3ll",
            "3ull",
            "0xffffffff",
            "4294967296",
            "threadIdx.x",
            "blockDim.y",
        ];
        const BINARY: [&str; 14] = [
            "+", "-", "*", "/", "%", "&", "|", "^", "<<", ">>", "<", "==", "&&", "||",
        ];
        const CASTS: [&str; 5] = [
            "(unsigned)",
            "(long long)",
            "(size_t)",
            "static_cast<unsigned long>",
            "(short)",
        ];
        let leaf = proptest::sample::select(&LEAVES[..]).prop_map(str::to_owned);
        let expression = leaf.prop_recursive(4, 24, 2, |inner| {
            prop_oneof![
                (
                    inner.clone(),
                    proptest::sample::select(&BINARY[..]),
                    inner.clone()
                )
                    .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
                inner.clone().prop_map(|a| format!("({a})")),
                (
                    proptest::sample::select(&["-", "~", "!"][..]),
                    inner.clone()
                )
                    .prop_map(|(op, a)| format!("{op}({a})")),
                (proptest::sample::select(&CASTS[..]), inner)
                    .prop_map(|(cast, a)| format!("{cast}({a})")),
            ]
        });
        let mut runner = TestRunner::new_with_rng(
            Config::default(),
            TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]),
        );
        let expressions: Vec<String> = (0..400)
            .map(|_| expression.new_tree(&mut runner).unwrap().current())
            .collect();
        let head = "#include <cstddef>\n#include <cstdint>\n#include <type_traits>\n\
                    struct Coordinates { unsigned x, y, z; };\n\
                    void f(int i, unsigned u, long l, unsigned long ul, long long ll,\n\
                    \x20      unsigned long long ull, short s, unsigned short us, char c, size_t sz,\n\
                    \x20      int64_t i64, uint32_t u32, Coordinates threadIdx, Coordinates blockDim) {\n";
        let body_at = head.len();
        let mut src = head.to_owned();
        let mut expected = Vec::new();
        for (n, text) in expressions.iter().enumerate() {
            let coordinates = ["threadIdx".to_owned(), "blockDim".to_owned()];
            let declared = DeclaredIntegers::of(format!("{head}}}\n").as_bytes(), &coordinates)
                .type_of(text.as_bytes(), body_at)
                .map(IntegerType::spelling);
            let Some(ty) = declared else {
                panic!("no type for `{text}`");
            };
            src.push_str(&format!(
                "  static_assert(std::is_same<decltype(+({text})), {ty}>::value, \"#{n}\");\n"
            ));
            expected.push((text.clone(), ty));
        }
        src.push_str("}\n");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("types.cpp");
        std::fs::write(&path, &src).unwrap();
        let Ok(output) = std::process::Command::new("g++")
            .args(["-std=c++17", "-fsyntax-only", "-w"])
            .arg(&path)
            .output()
        else {
            assert!(std::env::var_os("CI").is_none(), "g++ is required in CI");
            eprintln!("\n!!! SKIPPED: g++ is not installed; the typer was not checked !!!\n");
            return;
        };
        let stderr = String::from_utf8_lossy(&output.stderr);
        let wrong: Vec<String> = expected
            .iter()
            .enumerate()
            .filter(|(n, _)| stderr.contains(&format!("\"#{n}\"")))
            .map(|(_, (text, ty))| format!("`{text}`: typer says {ty}"))
            .collect();
        assert!(
            output.status.success() && wrong.is_empty(),
            "{wrong:#?}\n{stderr}"
        );
    }
}
