//! Argument rules (`[[argument]]`): an argument of a CUDA call that the
//! target's declaration takes in another form (a cast where CUDA has a C++
//! overload the target lacks, a macro the target documents for it). The
//! rule decides whether a given argument still needs it; the rewriter
//! writes it.
use cuport_model::{MinimumVersion, SdkVersion};

pub use crate::raw::ArgumentShape;

/// One compiled `[[argument]]` row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgumentRule {
    /// The CUDA function.
    pub cuda: String,
    /// 1-based position in the CUDA call.
    pub position: usize,
    prefix: String,
    suffix: String,
    /// Spellings (white space removed) that mean the argument has it.
    already: Vec<String>,
    shape: ArgumentShape,
    /// A type (white space removed) whose variables' addresses need nothing.
    declared: Option<String>,
    pub not_needed_from: Option<MinimumVersion>,
    pub note: String,
    pub reference: String,
}

/// Why a `wrap` text cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoPlaceholder;

/// `text` without any white space, for comparing spellings of a cast.
pub fn squeeze(text: &str) -> String {
    text.chars().filter(|c| !c.is_whitespace()).collect()
}

impl ArgumentRule {
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        cuda: String,
        position: usize,
        wrap: &str,
        already: &[String],
        shape: ArgumentShape,
        declared: Option<&str>,
        not_needed_from: Option<MinimumVersion>,
        note: String,
        reference: String,
    ) -> Result<ArgumentRule, NoPlaceholder> {
        let (prefix, suffix) = match wrap.split_once('$') {
            Some((p, s)) if !s.contains('$') => (p.to_owned(), s.to_owned()),
            _ => return Err(NoPlaceholder),
        };
        let mut spellings: Vec<String> = already.iter().map(|a| squeeze(a)).collect();
        spellings.push(squeeze(&prefix));
        spellings.retain(|s| !s.is_empty());
        Ok(ArgumentRule {
            cuda,
            position,
            prefix,
            suffix,
            already: spellings,
            shape,
            declared: declared.map(squeeze),
            not_needed_from,
            note,
            reference,
        })
    }

    /// Whether a port made for `selected` (a release of `product`; `None`:
    /// the newest) needs the wrap at all.
    pub fn needed_for(&self, product: Option<&str>, selected: Option<&SdkVersion>) -> bool {
        let Some(minimum) = &self.not_needed_from else {
            return true;
        };
        let same_product = product.is_some_and(|p| p.eq_ignore_ascii_case(&minimum.product));
        match selected {
            Some(selected) => !same_product || minimum.excludes(selected),
            None => false,
        }
    }

    /// What goes before and after the argument `text` (as written, any
    /// white space around it aside), or `None` when it needs nothing: it
    /// already has the conversion, it is not of the shape the rule wraps,
    /// or it is `&v` of a variable `declares(v, type)` says has the type.
    pub fn wrap(
        &self,
        text: &str,
        declares: impl Fn(&str, &str) -> bool,
    ) -> Option<(String, String)> {
        let text = text.trim();
        let squeezed = squeeze(text);
        if text.is_empty()
            || self
                .already
                .iter()
                .any(|a| squeezed.starts_with(a.as_str()))
        {
            return None;
        }
        if self.shape == ArgumentShape::Name && !is_name(&squeezed) {
            return None;
        }
        if let (Some(ty), Some(variable)) = (&self.declared, squeezed.strip_prefix('&')) {
            if is_name(variable) && declares(variable, ty) {
                return None;
            }
        }
        // A C-style cast binds tighter than most operators: `(void**)a + b`
        // casts `a` alone, so anything but a simple operand is parenthesised.
        let c_cast = self.suffix.is_empty() && self.prefix.trim_end().ends_with(')');
        if c_cast && !is_simple_operand(&squeezed) {
            return Some((format!("{}(", self.prefix), format!("){}", self.suffix)));
        }
        Some((self.prefix.clone(), self.suffix.clone()))
    }

    /// `text` with the wrap applied, or as it is when it needs none.
    pub fn apply(&self, text: &str, declares: impl Fn(&str, &str) -> bool) -> String {
        match self.wrap(text, declares) {
            Some((before, after)) => format!("{before}{}{after}", text.trim()),
            None => text.to_owned(),
        }
    }

    /// The wrap with `placeholder` for the argument (a macro parameter).
    pub fn around(&self, placeholder: &str) -> String {
        format!("{}{placeholder}{}", self.prefix, self.suffix)
    }
}

/// `x`, `ns::x`, `::x`.
fn is_name(text: &str) -> bool {
    let body = text.strip_prefix("::").unwrap_or(text);
    !body.is_empty()
        && body.split("::").all(|part| {
            part.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
}

/// `x`, `&x`, `s.x`, `p->x`, `a[i]`, `ns::x`: what a C-style cast applies
/// to whole.
fn is_simple_operand(text: &str) -> bool {
    let body = text.strip_prefix('&').unwrap_or(text);
    !body.is_empty()
        && body
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | ':' | '.' | '[' | ']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(
        wrap: &str,
        already: &[&str],
        shape: ArgumentShape,
        declared: Option<&str>,
    ) -> ArgumentRule {
        let already: Vec<String> = already.iter().map(|s| (*s).to_owned()).collect();
        ArgumentRule::new(
            "f".into(),
            1,
            wrap,
            &already,
            shape,
            declared,
            None,
            String::new(),
            String::new(),
        )
        .expect("one placeholder")
    }

    #[test]
    fn an_argument_that_has_the_cast_is_left() {
        let cast = rule(
            "(void**)$",
            &["reinterpret_cast<void**>("],
            ArgumentShape::Any,
            Some("void*"),
        );
        let none = |_: &str, _: &str| false;
        assert_eq!(cast.apply("(void **)&p", none), "(void **)&p");
        assert_eq!(
            cast.apply(" reinterpret_cast< void ** >(&p)", none),
            " reinterpret_cast< void ** >(&p)"
        );
        assert_eq!(cast.apply("&p", none), "(void**)&p");
        assert_eq!(cast.apply("&p[0] + 1", none), "(void**)(&p[0] + 1)");
        let void_pointer = |name: &str, ty: &str| name == "p" && ty == "void*";
        assert_eq!(cast.apply("&p", void_pointer), "&p");
        assert_eq!(cast.apply("&q", void_pointer), "(void**)&q");
    }

    #[test]
    fn a_name_only_rule_leaves_expressions() {
        let symbol = rule("HIP_SYMBOL($)", &[], ArgumentShape::Name, None);
        let none = |_: &str, _: &str| false;
        assert_eq!(symbol.apply("table", none), "HIP_SYMBOL(table)");
        assert_eq!(symbol.apply("ns::table", none), "HIP_SYMBOL(ns::table)");
        assert_eq!(symbol.apply("&table", none), "&table");
        assert_eq!(symbol.apply("HIP_SYMBOL(table)", none), "HIP_SYMBOL(table)");
        let cast = rule(
            "reinterpret_cast<const void*>($)",
            &["(void*)"],
            ArgumentShape::Any,
            None,
        );
        assert_eq!(
            cast.apply("k<float>", none),
            "reinterpret_cast<const void*>(k<float>)"
        );
        assert_eq!(cast.apply("(void*)k", none), "(void*)k");
    }

    #[test]
    fn a_wrap_needs_exactly_one_placeholder() {
        let make = |wrap: &str| {
            ArgumentRule::new(
                "f".into(),
                1,
                wrap,
                &[],
                ArgumentShape::Any,
                None,
                None,
                String::new(),
                String::new(),
            )
        };
        assert!(make("(void**)").is_err());
        assert!(make("$ + $").is_err());
    }

    #[test]
    fn a_release_with_the_overload_needs_no_wrap() {
        let mut cast = rule("(void**)$", &[], ArgumentShape::Any, None);
        cast.not_needed_from = MinimumVersion::from_text("HIP >= 6.3.0");
        let old = SdkVersion::parse("5.2.3").ok();
        let new = SdkVersion::parse("6.4.0").ok();
        assert!(cast.needed_for(Some("HIP"), old.as_ref()));
        assert!(!cast.needed_for(Some("HIP"), new.as_ref()));
        assert!(!cast.needed_for(Some("HIP"), None));
    }
}
