//! The small expression language of kernel rules: tensor shapes (`B*T, C`)
//! and attribute values (`1`, `[-1]`, `[C]`, `eps`) are integer or float
//! arithmetic over the kernel's parameters. Checking one tells which names
//! it uses, so a rule cannot refer to something the kernel does not have.

/// Why an expression is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExprError {
    #[error("empty expression")]
    Empty,
    #[error("unexpected `{0}`")]
    Unexpected(String),
    #[error("unbalanced brackets")]
    Unbalanced,
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Name(String),
    Number,
    Op,
    Open,
    Close,
}

/// The names an expression or comma-separated list of expressions uses, in
/// order of first use; a `[...]` list around the whole is allowed.
pub fn names_in(text: &str) -> Result<Vec<String>, ExprError> {
    let trimmed = text.trim();
    let inner = match trimmed.strip_prefix('[') {
        Some(rest) => rest.strip_suffix(']').ok_or(ExprError::Unbalanced)?,
        None => trimmed,
    };
    let mut names = Vec::new();
    for part in inner.split(',') {
        let tokens = tokenize(part)?;
        check_shape(&tokens)?;
        for tok in tokens {
            if let Tok::Name(name) = tok {
                if !names.contains(&name) && !is_literal_word(&name) {
                    names.push(name);
                }
            }
        }
    }
    Ok(names)
}

/// The comma-separated items of a shape, strides or list attribute
/// (`B * T, C`, `[0, 2, 1, 3]`), split at bracket depth 0 so that a call
/// (`min(T, 96)`) stays one item; a `[...]` around the whole is dropped.
pub fn list_items(text: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut depth = 0usize;
    for c in text
        .trim()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .chars()
    {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(String::new());
                continue;
            }
            _ => {}
        }
        if let Some(last) = out.last_mut() {
            last.push(c);
        }
    }
    out.into_iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect()
}

/// Words that are values, not names.
fn is_literal_word(word: &str) -> bool {
    matches!(word, "true" | "false")
}

fn tokenize(text: &str) -> Result<Vec<Tok>, ExprError> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        i += 1;
        match c {
            ' ' | '\t' => {}
            '+' | '-' | '*' | '/' | '%' => tokens.push(Tok::Op),
            '(' => tokens.push(Tok::Open),
            ')' => tokens.push(Tok::Close),
            c if c.is_ascii_digit() || c == '.' => {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '.') {
                    i += 1;
                }
                tokens.push(Tok::Number);
            }
            c if c.is_alphabetic() || c == '_' => {
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                tokens.push(Tok::Name(chars[start..i].iter().collect()));
            }
            other => return Err(ExprError::Unexpected(other.to_string())),
        }
    }
    Ok(tokens)
}

/// Operands and binary operators alternate (a leading or post-operator `-`
/// is a sign) and brackets balance.
fn check_shape(tokens: &[Tok]) -> Result<(), ExprError> {
    if tokens.is_empty() {
        return Err(ExprError::Empty);
    }
    let mut depth = 0i32;
    let mut want_operand = true;
    for tok in tokens {
        match tok {
            Tok::Name(_) | Tok::Number if want_operand => want_operand = false,
            Tok::Op if want_operand => {}
            Tok::Op => want_operand = true,
            Tok::Open if want_operand => depth += 1,
            Tok::Close if !want_operand => depth -= 1,
            other => return Err(ExprError::Unexpected(describe(other))),
        }
        if depth < 0 {
            return Err(ExprError::Unbalanced);
        }
    }
    match (depth, want_operand) {
        (0, false) => Ok(()),
        (0, true) => Err(ExprError::Unexpected("end".into())),
        _ => Err(ExprError::Unbalanced),
    }
}

fn describe(tok: &Tok) -> String {
    match tok {
        Tok::Name(n) => n.clone(),
        Tok::Number => "number".into(),
        Tok::Op => "operator".into(),
        Tok::Open => "(".into(),
        Tok::Close => ")".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_list_their_names_once() {
        assert_eq!(names_in("B*T, C").unwrap_or_default(), ["B", "T", "C"]);
        assert_eq!(names_in("[-1]").unwrap_or_default(), Vec::<String>::new());
        assert_eq!(names_in("(N + 1) / 2, N").unwrap_or_default(), ["N"]);
        assert_eq!(names_in("1e-5").unwrap_or_default(), Vec::<String>::new());
    }

    #[test]
    fn malformed_expressions_are_errors() {
        assert_eq!(names_in(""), Err(ExprError::Empty));
        assert_eq!(names_in("B T"), Err(ExprError::Unexpected("T".into())));
        assert_eq!(names_in("(B"), Err(ExprError::Unbalanced));
        assert_eq!(names_in("B *"), Err(ExprError::Unexpected("end".into())));
        assert!(names_in("a[0]").is_err());
    }
}
