//! Evaluation of the kernel rules' arithmetic (`B*T, C`, `ceil_div(N, 256)`)
//! once a case has given every size parameter a value. Integer operands
//! divide as C does (truncating), because launch and shape expressions are
//! written in C's integer arithmetic.
use std::collections::BTreeMap;

use super::EvidenceError;

/// The value of every comma-separated expression of `text` (a `[...]`
/// around the whole is allowed).
pub fn eval_list(text: &str, names: &BTreeMap<String, f64>) -> Result<Vec<f64>, EvidenceError> {
    let trimmed = text.trim();
    let inner = trimmed
        .strip_prefix('[')
        .and_then(|t| t.strip_suffix(']'))
        .unwrap_or(trimmed);
    if inner.trim().is_empty() {
        return Ok(Vec::new());
    }
    split_top(inner)
        .iter()
        .map(|part| eval(part, names))
        .collect()
}

/// The value of one expression.
pub fn eval(text: &str, names: &BTreeMap<String, f64>) -> Result<f64, EvidenceError> {
    let tokens: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    let mut parser = Parser {
        tokens,
        pos: 0,
        names,
        text,
    };
    let value = parser.sum()?;
    if parser.pos != parser.tokens.len() {
        return Err(parser.error("unexpected text"));
    }
    Ok(value.value)
}

/// A value with C's type distinction that matters here: a floating
/// literal (`1.0`, `1e-3`) makes its operations floating, so `1.0 / (B *
/// T)` divides as C does, while `N / 4` truncates.
#[derive(Debug, Clone, Copy)]
struct Num {
    value: f64,
    floating: bool,
}

impl Num {
    fn int_or_float(value: f64) -> Num {
        Num {
            value,
            floating: value.fract() != 0.0,
        }
    }

    fn with(self, value: f64, other: Num) -> Num {
        Num {
            value,
            floating: self.floating || other.floating,
        }
    }
}

/// Splits at commas outside brackets and braces (a function call's
/// arguments, an initialiser list stay together).
pub(super) fn split_top(text: &str) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut depth = 0;
    for c in text.chars() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = parts.last_mut() {
            last.push(c);
        }
    }
    parts
}

struct Parser<'a> {
    tokens: Vec<char>,
    pos: usize,
    names: &'a BTreeMap<String, f64>,
    text: &'a str,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> EvidenceError {
        EvidenceError::Expr {
            expr: self.text.to_string(),
            message: what.to_string(),
        }
    }

    fn peek(&self) -> Option<char> {
        self.tokens.get(self.pos).copied()
    }

    fn sum(&mut self) -> Result<Num, EvidenceError> {
        let mut value = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            let rhs = self.product()?;
            let result = if op == '+' {
                value.value + rhs.value
            } else {
                value.value - rhs.value
            };
            value = value.with(result, rhs);
        }
        Ok(value)
    }

    fn product(&mut self) -> Result<Num, EvidenceError> {
        let mut value = self.atom()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.pos += 1;
            let rhs = self.atom()?;
            value = apply(op, value, rhs).ok_or_else(|| self.error("division by zero"))?;
        }
        Ok(value)
    }

    fn atom(&mut self) -> Result<Num, EvidenceError> {
        match self.peek() {
            Some('-') => {
                self.pos += 1;
                let inner = self.atom()?;
                Ok(Num {
                    value: -inner.value,
                    ..inner
                })
            }
            Some('(') => {
                self.pos += 1;
                let value = self.sum()?;
                self.expect(')')?;
                Ok(value)
            }
            Some(c) if c.is_ascii_digit() || c == '.' => self.number(),
            Some(c) if c.is_alphabetic() || c == '_' => self.name(),
            _ => Err(self.error("expected a number, a name or `(`")),
        }
    }

    fn expect(&mut self, c: char) -> Result<(), EvidenceError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected `{c}`")))
        }
    }

    fn number(&mut self) -> Result<Num, EvidenceError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            let exponent_sign = (c == '-' || c == '+')
                && matches!(self.tokens.get(self.pos.wrapping_sub(1)), Some('e' | 'E'));
            if c.is_ascii_alphanumeric() || c == '.' || exponent_sign {
                self.pos += 1;
            } else {
                break;
            }
        }
        let word: String = self.tokens[start..self.pos].iter().collect();
        let digits = word.trim_end_matches(['f', 'F', 'u', 'U', 'l', 'L']);
        let value = digits
            .parse::<f64>()
            .map_err(|_| self.error(&format!("`{word}` is no number")))?;
        Ok(Num {
            value,
            floating: digits.contains(['.', 'e', 'E']),
        })
    }

    fn name(&mut self) -> Result<Num, EvidenceError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        let word: String = self.tokens[start..self.pos].iter().collect();
        if self.peek() == Some('(') {
            return self.call(&word);
        }
        match word.as_str() {
            "true" => Ok(Num::int_or_float(1.0)),
            "false" => Ok(Num::int_or_float(0.0)),
            _ => self
                .names
                .get(&word)
                .copied()
                .map(Num::int_or_float)
                .ok_or_else(|| self.error(&format!("`{word}` has no value in this case"))),
        }
    }

    /// `ceil_div(a, b)`, `min(a, b)`, `max(a, b)`, `pow(a, b)`: the
    /// helpers launch and case-value expressions use.
    fn call(&mut self, function: &str) -> Result<Num, EvidenceError> {
        self.expect('(')?;
        let a = self.sum()?;
        self.expect(',')?;
        let b = self.sum()?;
        self.expect(')')?;
        let (x, y) = (a.value, b.value);
        let value = match function {
            "ceil_div" | "CEIL_DIV" | "cdiv" | "div_ceil" if y != 0.0 => (x / y).ceil(),
            "min" => x.min(y),
            "max" => x.max(y),
            // C's pow is a double function.
            "pow" => {
                return Ok(Num {
                    value: x.powf(y),
                    floating: true,
                })
            }
            _ => return Err(self.error(&format!("unknown function `{function}`"))),
        };
        Ok(a.with(value, b))
    }
}

/// `a op b` as C computes it: `/` truncates when both are integers.
fn apply(op: char, a: Num, b: Num) -> Option<Num> {
    let (x, y) = (a.value, b.value);
    let value = match op {
        '*' => x * y,
        _ if y == 0.0 => return None,
        '/' if !(a.floating || b.floating) => (x / y).trunc(),
        '/' => x / y,
        _ => x % y,
    };
    Some(a.with(value, b))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names() -> BTreeMap<String, f64> {
        [("N".to_string(), 1000.0), ("C".to_string(), 77.0)].into()
    }

    #[test]
    fn a_floating_literal_divides_as_c_does() {
        let names = [("B".to_string(), 4.0), ("T".to_string(), 8.0)].into();
        assert_eq!(eval("1.0 / (B * T)", &names).unwrap(), 1.0 / 32.0);
        assert_eq!(eval("1 / (B * T)", &names).unwrap(), 0.0);
        assert_eq!(eval("1e-3 * 2", &names).unwrap(), 2e-3);
        assert_eq!(eval("1 - pow(0.5, 2)", &names).unwrap(), 0.75);
    }

    #[test]
    fn integer_division_truncates_like_c() {
        assert_eq!(eval("(N + 255) / 256", &names()).unwrap(), 4.0);
        assert_eq!(eval("ceil_div(N * 32, 128)", &names()).unwrap(), 250.0);
    }

    #[test]
    fn lists_and_floats_evaluate() {
        assert_eq!(eval_list("[C]", &names()).unwrap(), vec![77.0]);
        assert_eq!(eval_list("N, C", &names()).unwrap(), vec![1000.0, 77.0]);
        assert_eq!(eval("1e-5", &names()).unwrap(), 1e-5);
        assert_eq!(eval("1.5f", &names()).unwrap(), 1.5);
    }

    #[test]
    fn unknown_names_are_errors() {
        assert!(eval("M * 2", &names()).is_err());
    }
}
