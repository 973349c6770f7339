//! The `[[argument]]` rules of the target (`mappings/<target>/arguments.toml`):
//! an argument the target's declaration takes in another form is written
//! so (`(void**)&p` for `hipHostGetDevicePointer`, `HIP_SYMBOL(table)`),
//! only where the argument does not already have it and the selected
//! release needs it. Around a renamed call this is two insertions, so the
//! call keeps its layout and the edits inside the argument; a template
//! rewrite gets the argument text with it.
use cuport_analyze::Site;
use cuport_model::Code;
use cuport_model::TextRange;
use cuport_rules::ArgumentRule;

use super::Planner;

impl Planner<'_> {
    /// The rules for calls of `cuda_name` a port for the selected release
    /// needs (none in dual-stack planning: the shim's macros carry them).
    fn needed_argument_rules(&self, cuda_name: &str) -> Vec<&ArgumentRule> {
        if self.for_dual_stack {
            return Vec::new();
        }
        let target = self.options.planned_target();
        let product = target.profile().versions.product.as_deref();
        let selected = self.options.sdk_version(target);
        self.rules
            .argument_rules(target, cuda_name)
            .iter()
            .filter(|rule| rule.needed_for(product, selected.as_ref()))
            .collect()
    }

    /// Writes the needed wraps around the arguments of the call at `site`,
    /// which is renamed in place.
    pub(crate) fn wrap_arguments(&mut self, site: &Site, code: Code) {
        if site.call.is_some() {
            self.wrap_argument_ranges(&site.name, &site.args, code);
        }
    }

    /// Writes the needed wraps around the arguments (`args`) of a call of
    /// `cuda_name`, as insertions.
    pub(crate) fn wrap_argument_ranges(&mut self, cuda_name: &str, args: &[TextRange], code: Code) {
        let src = self.src;
        let mut edits = Vec::new();
        for rule in self.needed_argument_rules(cuda_name) {
            let Some(&arg) = args.get(rule.position - 1) else {
                continue;
            };
            let text = self.text(arg);
            let Some((before, after)) = rule.wrap(text, |name, ty| declares(src, name, ty)) else {
                continue;
            };
            let leading = text.len() - text.trim_start().len();
            let trailing = text.len() - text.trim_end().len();
            edits.push((arg.start + leading, before));
            edits.push((arg.end - trailing, after));
        }
        for (at, text) in edits {
            if !text.is_empty() {
                self.edit(TextRange::new(at, at), text, code, cuda_name);
            }
        }
    }

    /// `args` (a call of `cuda_name`, edits inside applied) with the
    /// needed wraps, for a template to use.
    pub(crate) fn wrapped_argument_texts(&self, cuda_name: &str, args: &mut [String]) {
        for rule in self.needed_argument_rules(cuda_name) {
            if let Some(arg) = args.get_mut(rule.position - 1) {
                *arg = rule.apply(arg, |name, ty| declares(self.src, name, ty));
            }
        }
    }
}

/// Whether `src` declares a variable `name` of type `ty` (white space
/// removed, as `void*`): `void *p`, `void* p = nullptr`. A cheap textual
/// test: the type right before the name, at a declaration's start.
fn declares(src: &[u8], name: &str, ty: &str) -> bool {
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    memchr::memmem::find_iter(src, name.as_bytes()).any(|at| {
        let end = at + name.len();
        let whole = (at == 0 || !word(src[at - 1])) && src.get(end).is_none_or(|&b| !word(b));
        if !whole {
            return false;
        }
        let before: Vec<u8> = src[at.saturating_sub(ty.len() * 3 + 8)..at]
            .iter()
            .copied()
            .filter(|b| !b.is_ascii_whitespace())
            .collect();
        let Some(rest) = before.strip_suffix(ty.as_bytes()) else {
            return false;
        };
        // At a declaration's or a parameter's start (`const void* p` is
        // another type).
        rest.last()
            .is_none_or(|&b| matches!(b, b';' | b'{' | b'}' | b',' | b'('))
    })
}

#[cfg(test)]
mod tests {
    use super::declares;

    #[test]
    fn finds_a_declared_void_pointer() {
        assert!(declares(b"int f() {\n  void *p = 0;\n", "p", "void*"));
        assert!(declares(b"void* p;", "p", "void*"));
        assert!(!declares(b"float *p;", "p", "void*"));
        assert!(!declares(b"void *pp;", "p", "void*"));
    }
}
