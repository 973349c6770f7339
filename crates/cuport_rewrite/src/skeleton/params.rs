//! Reading a kernel's parameter list and template header from the text the
//! analyser pointed at: type and name, pointer or scalar, element type.

/// One parameter of a CUDA kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Param {
    pub(crate) name: String,
    pub(crate) kind: ParamKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ParamKind {
    /// `const T* __restrict__ x`: points into device (global) memory.
    Pointer {
        /// The pointee type without qualifiers (`float`, `T`).
        element: String,
        is_const: bool,
        /// `T**` and deeper: the skeleton cannot give it a `GlobalTensor`.
        indirect: bool,
    },
    /// Passed by value (`int n`, `float alpha`, `size_t n`).
    Scalar { ty: String },
}

/// One parameter of a `template <...>` header.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TemplateParam {
    pub(crate) name: String,
    /// `None` for `typename T` / `class T`; the type of a value parameter otherwise.
    pub(crate) value_type: Option<String>,
}

/// Words that qualify a parameter's type without naming it.
const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "__restrict__",
    "__restrict",
    "restrict",
    "__grid_constant__",
];

/// Parses `const float* __restrict__ a` (position `index` names unnamed
/// parameters). `None` for `void` and empty lists.
pub(crate) fn parse_param(text: &str, index: usize) -> Option<Param> {
    let text = text.split('=').next().unwrap_or(text).trim();
    if text.is_empty() || text == "void" || text == "..." {
        return None;
    }
    // `float x[]` is a pointer in a parameter list.
    let (text, array) = match text.find('[') {
        Some(at) => (&text[..at], true),
        None => (text, false),
    };
    let stars = text.matches('*').count() + usize::from(array);
    let spaced = text.replace(['*', '&'], " ");
    let words: Vec<&str> = spaced.split_whitespace().collect();
    let is_const = words.contains(&"const");
    let mut type_words: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !QUALIFIERS.contains(w))
        .collect();
    let name = match type_words.last() {
        Some(last) if type_words.len() > 1 && is_identifier(last) => {
            let name = (*last).to_owned();
            type_words.pop();
            name
        }
        _ => format!("arg{index}"),
    };
    let ty = type_words.join(" ");
    let kind = if stars == 0 {
        ParamKind::Scalar {
            ty: scalar_type(&words, &name),
        }
    } else {
        ParamKind::Pointer {
            element: if ty == "void" { "uint8_t".into() } else { ty },
            is_const,
            indirect: stars > 1,
        }
    };
    Some(Param { name, kind })
}

/// A scalar's type as written, minus `__restrict__`-style words that only
/// make sense on pointers, and minus its name.
fn scalar_type(words: &[&str], name: &str) -> String {
    let mut kept: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !matches!(*w, "__restrict__" | "__restrict" | "__grid_constant__"))
        .collect();
    if kept.last() == Some(&name) {
        kept.pop();
    }
    kept.join(" ")
}

/// Parses the `<typename T, int BLOCK>` of a template header (angle
/// brackets included or not).
pub(crate) fn parse_template(text: &str) -> Vec<TemplateParam> {
    let inner = text.trim().trim_start_matches('<').trim_end_matches('>');
    split_top_level(inner)
        .into_iter()
        .filter_map(|part| {
            let part = part.split('=').next().unwrap_or(part).trim();
            let words: Vec<&str> = part.split_whitespace().collect();
            let (name, rest) = words.split_last()?;
            let value_type = match rest {
                ["typename" | "class"] => None,
                _ => Some(rest.join(" ")),
            };
            Some(TemplateParam {
                name: (*name).to_owned(),
                value_type,
            })
        })
        .collect()
}

/// Splits on commas that are not inside `<>`, `()` or `[]`.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (at, c) in text.char_indices() {
        match c {
            '<' | '(' | '[' => depth += 1,
            '>' | ')' | ']' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&text[start..at]);
                start = at + 1;
            }
            _ => {}
        }
    }
    if !text[start..].trim().is_empty() {
        parts.push(&text[start..]);
    }
    parts
}

/// CUDA's half-precision type names in Ascend C spelling, word by word:
/// `__half` → `half`; `__nv_bfloat16` → `bfloat16_t` (the bfloat16
/// spelling is UNCONFIRMED; the skeleton's TODO list says so).
pub(crate) fn ascend_type(ty: &str) -> String {
    ty.split_whitespace()
        .map(|word| match word {
            "__half" => "half",
            "__nv_bfloat16" | "nv_bfloat16" => "bfloat16_t",
            // CUDA's texture and surface objects are `unsigned long long`
            // handles; Ascend C has neither, so the skeleton keeps the
            // integer and the port passes the buffer behind it instead.
            "cudaTextureObject_t" | "cudaSurfaceObject_t" => "uint64_t",
            other => other,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn is_identifier(word: &str) -> bool {
    let mut chars = word.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `vector_add` → `VectorAdd`.
pub(crate) fn camel_case(name: &str) -> String {
    name.split('_')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_pointers_scalars_and_restrict() {
        let p = parse_param("const float* __restrict__ a", 0);
        assert_eq!(
            p,
            Some(Param {
                name: "a".into(),
                kind: ParamKind::Pointer {
                    element: "float".into(),
                    is_const: true,
                    indirect: false
                }
            })
        );
        let n = parse_param(" size_t n", 3);
        assert_eq!(
            n.map(|p| p.kind),
            Some(ParamKind::Scalar {
                ty: "size_t".into()
            })
        );
        let unnamed = parse_param("int*", 2);
        assert_eq!(unnamed.map(|p| p.name), Some("arg2".to_owned()));
        let array = parse_param("float out[]", 0);
        assert!(matches!(
            array.map(|p| p.kind),
            Some(ParamKind::Pointer {
                is_const: false,
                ..
            })
        ));
        let indirect = parse_param("float** rows", 0);
        assert!(matches!(
            indirect.map(|p| p.kind),
            Some(ParamKind::Pointer { indirect: true, .. })
        ));
        assert_eq!(parse_param("void", 0), None);
    }

    #[test]
    fn reads_template_headers() {
        let t = parse_template("<typename T, int BLOCK>");
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].value_type, None);
        assert_eq!(t[1].value_type.as_deref(), Some("int"));
        assert_eq!(t[1].name, "BLOCK");
        assert_eq!(camel_case("reduce_sum"), "ReduceSum");
    }
}
