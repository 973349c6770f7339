//! Argument templates: how a CUDA call's arguments become the target call.
//!
//! Syntax: `$n` (the n-th argument's source text, 1-based), `${n}`, `${n:map}`
//! (the argument mapped through an enum map), `${n..}` (arguments n and later,
//! comma-separated; a comma before it disappears when there are none),
//! `${n=text}` (argument n, or `text` when the call leaves it out: CUDA's
//! default argument where the target declares none), `$$` (a literal `$`). Everything else is literal text, so casts, reordering,
//! dropped and repeated (derived) arguments and helper calls need no syntax.
use std::collections::BTreeMap;
use std::sync::Arc;

/// A CUDA enum's values mapped to the target's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumMap {
    pub name: String,
    pub cuda_enum: String,
    pub values: BTreeMap<String, String>,
    /// Helper that converts a non-literal value at run time.
    pub fallback: Option<String>,
}

/// Why a template could not be parsed or applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TemplateError {
    #[error("template `{template}`: {problem} at byte {offset}")]
    Syntax {
        template: String,
        offset: usize,
        problem: &'static str,
    },
    #[error("template refers to enum map `{0}`, which no file of this target defines")]
    UnknownEnumMap(String),
    #[error("template uses argument ${index} but the call has only {given} argument(s)")]
    MissingArgument { index: usize, given: usize },
    #[error("argument `{arg}` is not a value of `{enum_name}` (enum map `{map}` has no run-time fallback); port this call by hand")]
    NotAnEnumLiteral {
        arg: String,
        map: String,
        enum_name: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    Lit(String),
    Arg(usize),
    Mapped(usize, MapRef),
    Rest {
        from: usize,
        leading_comma: bool,
    },
    /// The last argument, with the value CUDA declares as its default.
    Defaulted {
        index: usize,
        default: String,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum MapRef {
    Name(String),
    Linked(Arc<EnumMap>),
}

/// A parsed argument template.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    source: String,
    pieces: Vec<Piece>,
}

impl Template {
    /// Parses `source`; enum maps stay unresolved until [`Template::link`].
    pub fn parse(source: &str) -> Result<Template, TemplateError> {
        let pieces = Parser {
            src: source,
            pos: 0,
        }
        .pieces()?;
        Ok(Template {
            source: source.to_owned(),
            pieces,
        })
    }

    /// Resolves `${n:map}` references through `find`.
    pub fn link(
        mut self,
        find: impl Fn(&str) -> Option<Arc<EnumMap>>,
    ) -> Result<Template, TemplateError> {
        for piece in &mut self.pieces {
            if let Piece::Mapped(_, map) = piece {
                if let MapRef::Name(name) = map {
                    let linked =
                        find(name).ok_or_else(|| TemplateError::UnknownEnumMap(name.clone()))?;
                    *map = MapRef::Linked(linked);
                }
            }
        }
        Ok(self)
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// Names of the enum maps the template uses.
    pub fn enum_maps(&self) -> Vec<&str> {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Mapped(_, MapRef::Name(n)) => Some(n.as_str()),
                Piece::Mapped(_, MapRef::Linked(m)) => Some(m.name.as_str()),
                _ => None,
            })
            .collect()
    }

    /// The highest argument number the template uses (1-based; 0 if none).
    pub fn max_arg(&self) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Arg(i) | Piece::Mapped(i, _) => i + 1,
                // `${n..}` may be empty and `${n=text}` absent, so they need
                // only the arguments before them.
                Piece::Rest { from, .. } => *from,
                Piece::Defaulted { index, .. } => *index,
                Piece::Lit(_) => 0,
            })
            .max()
            .unwrap_or(0)
    }

    /// Whether `${n..}` makes the produced argument count vary.
    pub fn is_variadic(&self) -> bool {
        self.pieces.iter().any(|p| matches!(p, Piece::Rest { .. }))
    }

    /// The function the template calls, when it is one call `name(...)`.
    pub fn callee(&self) -> Option<&str> {
        call_shape(&self.source).map(|(name, _)| name)
    }

    /// The template's text when it is a bare name (a type, value or header
    /// path: no arguments, brackets or spaces), which replaces a site that
    /// is not a call: an `older-sdk` form of a type's rename.
    pub fn plain_name(&self) -> Option<&str> {
        let bare = matches!(self.pieces.as_slice(), [Piece::Lit(_)])
            && !self.source.is_empty()
            && !self
                .source
                .contains(|c: char| c.is_whitespace() || "()[]{}<>,;\"'".contains(c));
        bare.then_some(self.source.as_str())
    }

    /// Number of arguments the produced call has (None if not a call or variadic).
    pub fn arity(&self) -> Option<usize> {
        if self.is_variadic() {
            return None;
        }
        call_shape(&self.source).map(|(_, n)| n)
    }

    /// Builds the target text from the source text of the call's arguments.
    pub fn apply(&self, args: &[&str]) -> Result<String, TemplateError> {
        let mut out = String::with_capacity(self.source.len() + 16);
        for piece in &self.pieces {
            match piece {
                Piece::Lit(text) => out.push_str(text),
                Piece::Arg(i) => out.push_str(arg(args, *i)?.trim()),
                Piece::Mapped(i, map) => out.push_str(&map_value(arg(args, *i)?.trim(), map)?),
                Piece::Defaulted { index, default } => {
                    out.push_str(args.get(*index).map_or(default.as_str(), |a| a.trim()));
                }
                Piece::Rest {
                    from,
                    leading_comma,
                } => {
                    let rest: Vec<&str> = args.iter().skip(*from).map(|a| a.trim()).collect();
                    if !rest.is_empty() {
                        if *leading_comma {
                            out.push_str(", ");
                        }
                        out.push_str(&rest.join(", "));
                    }
                }
            }
        }
        Ok(out)
    }
}

impl Template {
    /// The body of a C function-like macro with parameters `params` that
    /// does what the template does: `$n` becomes `(param)`, `${n..}` becomes
    /// `__VA_ARGS__` (the macro must then be variadic), and `${n:map}` relies
    /// on the enum's values already being the target's (a cast fallback is
    /// kept, a helper fallback converts at run time).
    pub fn macro_body(&self, params: &[&str]) -> String {
        let param = |i: usize| params.get(i).copied().unwrap_or("__VA_ARGS__");
        let mut out = String::with_capacity(self.source.len() + 16);
        for piece in &self.pieces {
            match piece {
                Piece::Lit(text) => out.push_str(text),
                Piece::Arg(i) => out.push_str(&format!("({})", param(*i))),
                Piece::Mapped(i, map) => {
                    let fallback = match map {
                        MapRef::Linked(m) => m.fallback.as_deref(),
                        MapRef::Name(_) => None,
                    };
                    match fallback {
                        Some(f) => out.push_str(&format!("{f}({})", param(*i))),
                        None => out.push_str(&format!("({})", param(*i))),
                    }
                }
                Piece::Rest {
                    leading_comma: true,
                    ..
                } => out.push_str(", ##__VA_ARGS__"),
                Piece::Rest { .. } => out.push_str("__VA_ARGS__"),
                // The shim's selector takes the argument when given.
                Piece::Defaulted { default, .. } => {
                    out.push_str(&format!("CUPORT_DEFAULT_ARG({default}, __VA_ARGS__)"));
                }
            }
        }
        out
    }

    /// `n` of `${n..}` or `${n=text}` (0-based: the number of named
    /// arguments before the ones a call may leave out).
    pub fn rest_from(&self) -> Option<usize> {
        self.pieces.iter().find_map(|p| match p {
            Piece::Rest { from, .. } => Some(*from),
            Piece::Defaulted { index, .. } => Some(*index),
            _ => None,
        })
    }

    /// Whether `${n:map}` uses a map whose fallback is a helper function
    /// (it converts CUDA values at run time, so the values stay CUDA's).
    pub fn maps_at_run_time(&self) -> Vec<&EnumMap> {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Mapped(_, MapRef::Linked(m)) if m.converts_at_run_time() => Some(m.as_ref()),
                _ => None,
            })
            .collect()
    }
}

impl Template {
    /// Whether argument `index` (0-based) goes through an enum map that
    /// lists `value`: the value is then consumed by the rewrite (its own
    /// site needs no rule of its own).
    pub fn maps_argument_value(&self, index: usize, value: &str) -> bool {
        self.pieces.iter().any(|p| match p {
            Piece::Mapped(i, MapRef::Linked(m)) => *i == index && m.values.contains_key(value),
            _ => false,
        })
    }

    /// Whether the produced text contains argument `index` (0-based) in
    /// some form; a dropped argument (`cublasGemmEx`'s algorithm) does not.
    pub fn uses_argument(&self, index: usize) -> bool {
        self.pieces.iter().any(|p| match p {
            Piece::Arg(i) | Piece::Mapped(i, _) => *i == index,
            Piece::Rest { from, .. } => index >= *from,
            Piece::Defaulted { index: i, .. } => *i == index,
            Piece::Lit(_) => false,
        })
    }

    /// The run-time conversion helpers the template calls for these
    /// arguments: a map's fallback is used only for an argument that is not
    /// one of the map's literal values.
    pub fn conversions_for(&self, args: &[&str]) -> Vec<&str> {
        self.pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Mapped(i, MapRef::Linked(m)) if m.converts_at_run_time() => {
                    let literal = args
                        .get(*i)
                        .is_some_and(|a| m.values.contains_key(a.trim()));
                    (!literal).then_some(m.fallback.as_deref()).flatten()
                }
                _ => None,
            })
            .collect()
    }
}

impl EnumMap {
    /// A fallback that is a helper call (`cuport_acl_event_flags`) rather
    /// than a cast (`(cuport_blas_op_t)`).
    pub fn converts_at_run_time(&self) -> bool {
        self.fallback
            .as_deref()
            .is_some_and(|f| !f.starts_with('('))
    }
}

fn arg<'a>(args: &[&'a str], index: usize) -> Result<&'a str, TemplateError> {
    args.get(index)
        .copied()
        .ok_or(TemplateError::MissingArgument {
            index: index + 1,
            given: args.len(),
        })
}

fn map_value(arg: &str, map: &MapRef) -> Result<String, TemplateError> {
    let MapRef::Linked(map) = map else {
        return Err(TemplateError::UnknownEnumMap(String::new()));
    };
    let key = arg.trim_start_matches("::");
    if let Some(value) = map.values.get(key) {
        return Ok(value.clone());
    }
    match &map.fallback {
        Some(helper) => Ok(format!("{helper}({arg})")),
        None => Err(TemplateError::NotAnEnumLiteral {
            arg: arg.to_owned(),
            map: map.name.clone(),
            enum_name: map.cuda_enum.clone(),
        }),
    }
}

struct Parser<'a> {
    src: &'a str,
    pos: usize,
}

impl Parser<'_> {
    fn pieces(mut self) -> Result<Vec<Piece>, TemplateError> {
        let mut pieces = Vec::new();
        let mut lit = String::new();
        while let Some(dollar) = self.src[self.pos..].find('$') {
            lit.push_str(&self.src[self.pos..self.pos + dollar]);
            self.pos += dollar + 1;
            if self.src[self.pos..].starts_with('$') {
                lit.push('$');
                self.pos += 1;
                continue;
            }
            let piece = self.placeholder()?;
            let leading_comma = matches!(piece, Piece::Rest { .. }) && strip_comma(&mut lit);
            if !lit.is_empty() {
                pieces.push(Piece::Lit(std::mem::take(&mut lit)));
            }
            pieces.push(match piece {
                Piece::Rest { from, .. } => Piece::Rest {
                    from,
                    leading_comma,
                },
                other => other,
            });
        }
        lit.push_str(&self.src[self.pos..]);
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit));
        }
        if !optional_tail_is_last(&pieces) {
            self.pos = 0;
            return Err(self.error("`${n=text}` must be the last argument, with no `${n..}`"));
        }
        Ok(pieces)
    }

    fn placeholder(&mut self) -> Result<Piece, TemplateError> {
        if self.src[self.pos..].starts_with('{') {
            let close = self.src[self.pos..]
                .find('}')
                .ok_or_else(|| self.error("unclosed `${`"))?;
            let body = &self.src[self.pos + 1..self.pos + close];
            let piece = self.braced(body)?;
            self.pos += close + 1;
            return Ok(piece);
        }
        let digits = self.src[self.pos..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let index = self.index(&self.src[self.pos..self.pos + digits])?;
        self.pos += digits;
        Ok(Piece::Arg(index))
    }

    fn braced(&self, body: &str) -> Result<Piece, TemplateError> {
        if let Some(from) = body.strip_suffix("..") {
            return Ok(Piece::Rest {
                from: self.index(from)?,
                leading_comma: false,
            });
        }
        if let Some((n, default)) = body.split_once('=') {
            if default.trim().is_empty() {
                return Err(self.error("empty default after `=`"));
            }
            return Ok(Piece::Defaulted {
                index: self.index(n)?,
                default: default.trim().to_owned(),
            });
        }
        match body.split_once(':') {
            Some((n, map)) if !map.trim().is_empty() => Ok(Piece::Mapped(
                self.index(n)?,
                MapRef::Name(map.trim().to_owned()),
            )),
            Some(_) => Err(self.error("empty enum-map name after `:`")),
            None => Ok(Piece::Arg(self.index(body)?)),
        }
    }

    /// 1-based argument number in the text → 0-based index.
    fn index(&self, digits: &str) -> Result<usize, TemplateError> {
        match digits.trim().parse::<usize>() {
            Ok(n) if n >= 1 => Ok(n - 1),
            Ok(_) => Err(self.error("arguments are numbered from $1")),
            Err(_) => Err(self.error("expected an argument number after `$`")),
        }
    }

    fn error(&self, problem: &'static str) -> TemplateError {
        TemplateError::Syntax {
            template: self.src.to_owned(),
            offset: self.pos,
            problem,
        }
    }
}

/// Removes a trailing `,` (and spaces) so `${n..}` can own it.
/// A call may leave out only trailing arguments: one `${n=text}`, after
/// every other placeholder, and not together with `${n..}`.
fn optional_tail_is_last(pieces: &[Piece]) -> bool {
    let placeholders: Vec<&Piece> = pieces
        .iter()
        .filter(|p| !matches!(p, Piece::Lit(_)))
        .collect();
    let defaulted = placeholders
        .iter()
        .position(|p| matches!(p, Piece::Defaulted { .. }));
    let Some(at) = defaulted else { return true };
    let index = match placeholders[at] {
        Piece::Defaulted { index, .. } => *index,
        _ => return false,
    };
    at + 1 == placeholders.len()
        && placeholders.iter().all(|p| match p {
            Piece::Arg(i) | Piece::Mapped(i, _) => *i < index,
            Piece::Defaulted { .. } => true,
            Piece::Rest { .. } => false,
            Piece::Lit(_) => true,
        })
}

fn strip_comma(lit: &mut String) -> bool {
    let trimmed = lit.trim_end();
    if let Some(before) = trimmed.strip_suffix(',') {
        let keep = before.len();
        lit.truncate(keep);
        true
    } else {
        false
    }
}

/// `name(a, b)` → (`name`, 2) when the whole template is one call.
fn call_shape(source: &str) -> Option<(&str, usize)> {
    let open = source.find('(')?;
    let name = source[..open].trim();
    let is_ident = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':'));
    if !is_ident || !source.trim_end().ends_with(')') {
        return None;
    }
    let inner = &source[open + 1..source.trim_end().len() - 1];
    top_level_args(inner).map(|n| (name, n))
}

/// Counts comma-separated arguments at depth 0; None if brackets do not balance.
fn top_level_args(inner: &str) -> Option<usize> {
    let (mut depth, mut count, mut quote) = (0i32, 1usize, None);
    if inner.trim().is_empty() {
        return Some(0);
    }
    for c in inner.chars() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[' | '{') => depth += 1,
            (None, ')' | ']' | '}') => depth -= 1,
            (None, ',') if depth == 0 => count += 1,
            _ => {}
        }
        if depth < 0 {
            return None;
        }
    }
    (depth == 0).then_some(count)
}

#[cfg(test)]
mod tests;
