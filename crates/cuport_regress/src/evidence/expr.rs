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
    Ok(value)
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

    fn sum(&mut self) -> Result<f64, EvidenceError> {
        let mut value = self.product()?;
        while let Some(op @ ('+' | '-')) = self.peek() {
            self.pos += 1;
            let rhs = self.product()?;
            value = if op == '+' { value + rhs } else { value - rhs };
        }
        Ok(value)
    }

    fn product(&mut self) -> Result<f64, EvidenceError> {
        let mut value = self.atom()?;
        while let Some(op @ ('*' | '/' | '%')) = self.peek() {
            self.pos += 1;
            let rhs = self.atom()?;
            value = apply(op, value, rhs).ok_or_else(|| self.error("division by zero"))?;
        }
        Ok(value)
    }

    fn atom(&mut self) -> Result<f64, EvidenceError> {
        match self.peek() {
            Some('-') => {
                self.pos += 1;
                Ok(-self.atom()?)
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

    fn number(&mut self) -> Result<f64, EvidenceError> {
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
        digits
            .parse::<f64>()
            .map_err(|_| self.error(&format!("`{word}` is no number")))
    }

    fn name(&mut self) -> Result<f64, EvidenceError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
            self.pos += 1;
        }
        let word: String = self.tokens[start..self.pos].iter().collect();
        if self.peek() == Some('(') {
            return self.call(&word);
        }
        match word.as_str() {
            "true" => Ok(1.0),
            "false" => Ok(0.0),
            _ => self
                .names
                .get(&word)
                .copied()
                .ok_or_else(|| self.error(&format!("`{word}` has no value in this case"))),
        }
    }

    /// `ceil_div(a, b)`, `min(a, b)`, `max(a, b)`: the helpers launch
    /// expressions use.
    fn call(&mut self, function: &str) -> Result<f64, EvidenceError> {
        self.expect('(')?;
        let a = self.sum()?;
        self.expect(',')?;
        let b = self.sum()?;
        self.expect(')')?;
        match function {
            "ceil_div" | "CEIL_DIV" | "cdiv" | "div_ceil" if b != 0.0 => Ok((a / b).ceil()),
            "min" => Ok(a.min(b)),
            "max" => Ok(a.max(b)),
            _ => Err(self.error(&format!("unknown function `{function}`"))),
        }
    }
}

fn apply(op: char, a: f64, b: f64) -> Option<f64> {
    let integers = a.fract() == 0.0 && b.fract() == 0.0;
    match op {
        '*' => Some(a * b),
        _ if b == 0.0 => None,
        '/' if integers => Some((a / b).trunc()),
        '/' => Some(a / b),
        _ => Some(a % b),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names() -> BTreeMap<String, f64> {
        [("N".to_string(), 1000.0), ("C".to_string(), 77.0)].into()
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
