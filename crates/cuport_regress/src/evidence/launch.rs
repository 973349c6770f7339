//! How the kernel is launched: grid, block and dynamic shared memory as
//! expressions over the kernel's parameters. A rule may declare them; else
//! they are read from the file's first launch of the kernel
//! (`k<<<grid_size, block_size>>>(out, inp, N)`): names are followed back
//! to their `name = expr;` assignments before the launch, and a launch
//! argument that is a plain name stands for the kernel parameter at its
//! position. A block size the file leaves open (a host function's
//! parameter) gets [`DEFAULT_BLOCK`], said in the evidence.
use std::fmt;

use super::EvidenceError;

/// The block size assumed where the file's host code takes it as a
/// parameter (llm.c's dev kernels try several).
pub(super) const DEFAULT_BLOCK: &str = "256";

#[derive(Debug, Clone, PartialEq)]
pub struct LaunchSpec {
    pub grid: String,
    pub block: String,
    pub shared: String,
    /// Where the launch came from and what was assumed.
    pub origin: String,
}

impl fmt::Display for LaunchSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "<<<{}, {}, {}>>> ({})",
            self.grid, self.block, self.shared, self.origin
        )
    }
}

/// The launch of `kernel` in `text`, in terms of the kernel's `params`.
pub fn launch_from_source(
    text: &str,
    kernel: &str,
    params: &[String],
) -> Result<LaunchSpec, EvidenceError> {
    let not_found = || {
        EvidenceError::Unsupported(format!(
            "no `{kernel}<<<...>>>(...)` launch in the file; declare `launch = {{ grid = \"...\", block = \"...\" }}` in the rule"
        ))
    };
    let (at, config_start) = find_launch(text, kernel).ok_or_else(not_found)?;
    let config_end = text[config_start..].find(">>>").ok_or_else(not_found)? + config_start;
    let config = split_args(&text[config_start..config_end]);
    let args_start = text[config_end..].find('(').ok_or_else(not_found)? + config_end + 1;
    let args_end = matching_paren(text, args_start).ok_or_else(not_found)?;
    let args = split_args(&text[args_start..args_end]);
    let line = text[..at].matches('\n').count() + 1;
    // Assignments count from the start of the enclosing function on (a
    // top-level function ends with `}` in the first column), so a kernel's
    // own `int block_size = blockDim.x;` is not taken for the host's.
    let function_start = text[..at].rfind("\n}").map_or(0, |i| i + 2);
    let mut resolver = Resolver {
        before: &text[function_start..at],
        args: &args,
        params,
        assumed: Vec::new(),
    };
    let grid = resolver.resolve(config.first().map_or("1", String::as_str), 0)?;
    let block = resolver.resolve(config.get(1).map_or("1", String::as_str), 0)?;
    let shared = match config.get(2) {
        Some(s) => resolver.resolve(s, 0)?,
        None => "0".to_string(),
    };
    let mut origin = format!("the launch at line {line}");
    if !resolver.assumed.is_empty() {
        origin.push_str(&format!(", assuming {}", resolver.assumed.join(", ")));
    }
    Ok(LaunchSpec {
        grid,
        block,
        shared,
        origin,
    })
}

/// Where `kernel <<<` starts and where its configuration starts (spaces
/// before `<<<` are allowed: `k <<<grid, block>>>`).
fn find_launch(text: &str, kernel: &str) -> Option<(usize, usize)> {
    text.match_indices(kernel).find_map(|(at, _)| {
        let after = at + kernel.len();
        let rest = &text[after..];
        let gap = rest.len() - rest.trim_start().len();
        let starts_word = at > 0 && is_word(text.as_bytes()[at - 1]);
        (!starts_word && rest[gap..].starts_with("<<<")).then_some((at, after + gap + 3))
    })
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

fn matching_paren(text: &str, start: usize) -> Option<usize> {
    let mut depth = 1;
    for (i, c) in text[start..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(start + i);
                }
            }
            _ => {}
        }
    }
    None
}

fn split_args(text: &str) -> Vec<String> {
    super::expr::split_top(text)
        .into_iter()
        .map(|p| p.trim().to_string())
        .collect()
}

/// `sizeof` of the element types the runner handles (dynamic shared memory
/// is written `n * sizeof(float)`).
const SIZES: [(&str, &str); 3] = [
    ("sizeof(float)", "4"),
    ("sizeof(int)", "4"),
    ("sizeof(double)", "8"),
];

struct Resolver<'a> {
    before: &'a str,
    args: &'a [String],
    params: &'a [String],
    assumed: Vec<String>,
}

impl Resolver<'_> {
    /// `expr` with every name replaced by a kernel parameter, a number or
    /// its resolved assignment.
    fn resolve(&mut self, expr: &str, depth: usize) -> Result<String, EvidenceError> {
        let mut out = String::new();
        let mut word = String::new();
        let expr = SIZES
            .iter()
            .fold(expr.to_string(), |e, (ty, n)| e.replace(ty, n));
        for c in expr.chars().chain(std::iter::once(' ')) {
            if c.is_alphanumeric() || c == '_' || (c == '.' && !word.is_empty()) {
                word.push(c);
                continue;
            }
            if !word.is_empty() {
                let replaced = self.name(&word, c == '(', depth)?;
                out.push_str(&replaced);
                word.clear();
            }
            out.push(c);
        }
        Ok(out.trim().to_string())
    }

    fn name(&mut self, word: &str, is_call: bool, depth: usize) -> Result<String, EvidenceError> {
        if is_call || word.starts_with(|c: char| c.is_ascii_digit()) {
            return Ok(word.to_string());
        }
        if let Some(i) = self.args.iter().position(|a| a == word) {
            if let Some(param) = self.params.get(i) {
                return Ok(param.clone());
            }
        }
        let unresolved = || {
            EvidenceError::Unsupported(format!(
                "the launch uses `{word}`, which is neither a kernel argument nor assigned before the launch; declare `launch` in the rule"
            ))
        };
        match last_assignment(self.before, word) {
            Some(value) if depth < 6 => Ok(format!("({})", self.resolve(&value, depth + 1)?)),
            _ if word.contains("block_size") || word.contains("blockSize") => {
                let assumption = format!("{word} = {DEFAULT_BLOCK}");
                if !self.assumed.contains(&assumption) {
                    self.assumed.push(assumption);
                }
                Ok(DEFAULT_BLOCK.to_string())
            }
            _ => Err(unresolved()),
        }
    }
}

/// The right side of the last `word = value;` (not `==`) before the launch.
fn last_assignment(text: &str, word: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut found = None;
    for (at, _) in text.match_indices(word) {
        let end = at + word.len();
        if (at > 0 && is_word(bytes[at - 1])) || bytes.get(end).is_some_and(|&b| is_word(b)) {
            continue;
        }
        let rest = text[end..].trim_start();
        if rest.starts_with('=') && !rest.starts_with("==") {
            let value = rest[1..].split(';').next().unwrap_or("").trim();
            if !value.is_empty() && !value.contains('\n') {
                found = Some(value.to_string());
            }
        }
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn follows_assignments_back_to_kernel_parameters() {
        let text = "void f(float* o, int n, const int block_size) {\n\
                    const int grid_size = CEIL_DIV(n * 32, block_size);\n\
                    k<<<grid_size, block_size>>>(o, n);\n}";
        let params = ["out".to_string(), "N".to_string()];
        let launch = launch_from_source(text, "k", &params).unwrap();
        assert_eq!(launch.grid, "(CEIL_DIV(N * 32, 256))");
        assert_eq!(launch.block, "256");
        assert!(
            launch.origin.contains("block_size = 256"),
            "{}",
            launch.origin
        );
    }

    #[test]
    fn a_kernel_never_launched_is_an_error() {
        assert!(launch_from_source("__global__ void k() {}", "k", &[]).is_err());
    }
}
