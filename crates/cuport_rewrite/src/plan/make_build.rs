//! One-way Makefile ports for a target whose profile says how an nvcc
//! build is written there (`[make]` in `target.toml`, HIP):
//!
//! - nvcc's architecture options with their values (`-arch=sm_80`,
//!   `-gencode arch=compute_80,code=sm_80`) become one `--offload-arch=`
//!   per GPU the run chose (`--hip-arch`) or the profile's default: the
//!   first on a line carries the list, the others on it are deleted;
//! - nvcc options the target's compiler rejects and needs nothing for are
//!   deleted, with their value where they take one (`--expt-relaxed-constexpr`,
//!   `-ccbin g++`, `-t=0`), and
//!   host compiler options are written directly (`-Xcompiler -fopenmp` →
//!   `-fopenmp`), as in CMake files (`[cmake.one-way]`: they are the
//!   compiler's facts, whatever build system passes the options);
//! - everything else (the compiler, link libraries, install paths) is a
//!   rename of the rule tables.
//!
//! Targets without `[make]` facts, and dual-stack runs, get a coded
//! diagnostic on each site: nothing in a Makefile passes silently.
use cuport_analyze::Site;
use cuport_model::{Language, MakeFacts, OneWayCmake, TextRange};

use super::cmake_build::with_blanks_before;
use super::Planner;
use crate::diagnostic::{codes, Level};
use cuport_model::Effort;

impl Planner<'_> {
    /// Plans a Makefile site of one of the forms above, or reports it where
    /// Makefiles are not ported; false when the rule tables decide.
    pub(crate) fn make_site(&mut self, site: &Site) -> bool {
        if self.language != Language::Makefile {
            return false;
        }
        let profile = self.profile();
        let facts = match (&profile.make, &profile.cmake.one_way) {
            (Some(make), Some(cmake)) if !self.in_dual_stack() => (make, cmake),
            _ => {
                self.make_not_ported(site);
                return true;
            }
        };
        let name = site.name.as_str();
        let (make, cmake) = facts;
        if make.architecture_flags.iter().any(|f| f == name) {
            self.offload_architectures(site, make, cmake);
            return true;
        }
        let with_value = make.dropped_with_value.iter().any(|f| f == name);
        if with_value || cmake.dropped_flags.iter().any(|f| f == name) {
            self.drop_make_option(site, with_value);
            return true;
        }
        if cmake.host_option_forwarders.iter().any(|f| f == name) {
            return self.unwrap_host_options(site);
        }
        false
    }

    fn make_not_ported(&mut self, site: &Site) {
        let message = if self.in_dual_stack() {
            format!(
                "`{}`: a dual-stack port keeps Makefiles as written, for the CUDA build; build the other backends with CMake (cuport/cuport.cmake) or write their rules by hand",
                site.name
            )
        } else {
            format!(
                "`{}`: cuport ports Makefiles to HIP only; write this nvcc build for {} by hand (compiler, options, libraries, paths)",
                site.name, self.target()
            )
        };
        self.diagnose(site, codes::MAKE_NOT_PORTED, Level::Manual, message)
            .effort = Some(Effort::Low);
    }

    /// `-arch=sm_80`, `-arch sm_80`, `--generate-code arch=...,code=[...]`:
    /// the option and its value.
    fn offload_architectures(&mut self, site: &Site, make: &MakeFacts, cmake: &OneWayCmake) {
        let Some(range) = option_with_value(self.src, site.range) else {
            self.mapped_manual(site);
            return;
        };
        let chosen = !self.options.gpu_architectures.is_empty();
        let list = if chosen {
            &self.options.gpu_architectures
        } else {
            &cmake.architectures
        };
        let written = self.text(range).to_owned();
        let (line_start, _) = line_bounds(self.src, range.start);
        let option = &make.architecture_option;
        let first_on_line = !self.out.edits.iter().any(|e| {
            make.architecture_flags.contains(&e.cuda_name)
                && (line_start..range.start).contains(&e.range.start)
        });
        let replacement = if first_on_line {
            list.iter()
                .map(|gpu| format!("{option}={gpu}"))
                .collect::<Vec<_>>()
                .join(" ")
        } else {
            String::new()
        };
        let edit_range = if first_on_line {
            range
        } else {
            with_blanks_before(self.src, range)
        };
        self.edit(
            edit_range,
            replacement.clone(),
            self.code_of(site),
            &site.name,
        );
        let why = if chosen {
            "the --hip-arch list".to_owned()
        } else {
            cmake.architectures_note.clone()
        };
        let message = if first_on_line {
            format!("NVIDIA architectures `{written}` have no AMD counterpart; written as `{replacement}` ({why})")
        } else {
            format!("NVIDIA architectures `{written}` deleted: the line's first architecture option names the AMD GPUs ({why})")
        };
        self.note(site, Level::Approximate, message, &make.reference);
    }

    /// An architecture option whose value cuport cannot find: the table's
    /// manual row says what to do.
    fn mapped_manual(&mut self, site: &Site) {
        let note = self
            .lookup(&site.name)
            .and_then(|r| r.note().map(str::to_owned))
            .unwrap_or_default();
        let message = format!(
            "nvcc's `{}` without a value cuport reads: {note}",
            site.name
        );
        let code = self.code_of(site);
        self.diagnose(site, code, Level::Manual, message).effort = Some(Effort::Low);
    }

    /// Deletes an nvcc option (with its value when it takes one: `-t=0`,
    /// `-ccbin $(HOST_COMPILER)`) and the blanks before it.
    fn drop_make_option(&mut self, site: &Site, with_value: bool) {
        let src = self.src;
        let end = match option_with_value(src, site.range) {
            Some(range) if with_value => range.end,
            _ => word_end(src, site.range.start),
        };
        let range = with_blanks_before(src, TextRange::new(site.range.start, end));
        let written = self.text(TextRange::new(site.range.start, end)).to_owned();
        self.edit(range, String::new(), self.code_of(site), &site.name);
        let resolved = self.lookup(&site.name);
        let note = resolved
            .as_ref()
            .and_then(|r| r.note().map(str::to_owned))
            .unwrap_or_default();
        let reference = resolved
            .as_ref()
            .and_then(|r| r.reference().map(str::to_owned))
            .unwrap_or_default();
        let why = ["Delete it with its value: ", "Delete it: "]
            .iter()
            .find_map(|p| note.strip_prefix(p))
            .unwrap_or(&note);
        self.note(
            site,
            Level::Note,
            format!("nvcc's `{written}` is deleted: {why}"),
            &reference,
        );
    }
}

/// The option at `option` with its value: after `=` in the same word, or
/// the next word when the option ends its word. `None` when no value
/// follows.
fn option_with_value(src: &[u8], option: TextRange) -> Option<TextRange> {
    let end = option.end;
    if src.get(end) == Some(&b'=') {
        let value_end = word_end(src, end + 1);
        return (value_end > end + 1).then_some(TextRange::new(option.start, value_end));
    }
    if word_end(src, end) != end {
        return None;
    }
    let blanks = blanks_from(src, end);
    let value_end = word_end(src, end + blanks);
    let value = src.get(end + blanks..value_end)?;
    (blanks > 0 && !value.is_empty() && value[0] != b'-' && value[0] != b'\\')
        .then_some(TextRange::new(option.start, value_end))
}

/// Where a make word starting at `from` ends: at a blank, a quote, `;` or
/// a comment's `#`, or at a `)` that closes no `$(` opened inside the word
/// (`arch=compute_$(sm),code=sm_$(sm)` inside `$(eval ...)` is one word).
/// Deleting `-ccbin#...` whole turned the comment after it into code (a
/// fuzzing finding: `make_build::a_make_option_stops_at_a_comment` in the tests).
fn word_end(src: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    let mut k = from;
    while let Some(&b) = src.get(k) {
        match b {
            b'(' | b'{' => depth += 1,
            b')' | b'}' if depth == 0 => break,
            b')' | b'}' => depth -= 1,
            b'"' | b'\'' | b';' => break,
            b'#' if depth == 0 => break,
            b if b.is_ascii_whitespace() => break,
            _ => {}
        }
        k += 1;
    }
    k
}

fn blanks_from(src: &[u8], from: usize) -> usize {
    src.get(from..)
        .unwrap_or_default()
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count()
}

/// The start and end of the physical line holding `at`.
fn line_bounds(src: &[u8], at: usize) -> (usize, usize) {
    let start = src[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let end = src[at..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |i| at + i);
    (start, end)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(src: &str, option: &str) -> Option<String> {
        let start = src.find(option)?;
        let range = option_with_value(src.as_bytes(), TextRange::new(start, start + option.len()))?;
        Some(src[range.start..range.end].to_owned())
    }

    #[test]
    fn an_architecture_option_takes_its_value_with_it() {
        assert_eq!(
            value("X = -arch=sm_80 -O3", "-arch").as_deref(),
            Some("-arch=sm_80")
        );
        assert_eq!(
            value("X = -arch sm_80", "-arch").as_deref(),
            Some("-arch sm_80")
        );
        assert_eq!(
            value(
                "$(eval F += -gencode arch=compute_$(sm),code=sm_$(sm)))",
                "-gencode"
            )
            .as_deref(),
            Some("-gencode arch=compute_$(sm),code=sm_$(sm)")
        );
        assert_eq!(
            value(
                "F += --generate-code arch=compute_$(G),code=[compute_$(G),sm_$(G)]",
                "--generate-code"
            )
            .as_deref(),
            Some("--generate-code arch=compute_$(G),code=[compute_$(G),sm_$(G)]")
        );
        assert_eq!(value("X = -arch -O3", "-arch"), None);
        assert_eq!(value("X = -arch", "-arch"), None);
        assert_eq!(value("X = -arch=", "-arch"), None);
    }
}
