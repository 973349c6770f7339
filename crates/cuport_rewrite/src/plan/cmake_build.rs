//! One-way CMake ports for a target whose profile says how CUDA-only
//! settings are written there (`[cmake.one-way]` in `target.toml`, HIP):
//!
//! - NVIDIA architecture numbers (`set(CMAKE_CUDA_ARCHITECTURES 80 90)`)
//!   become the GPU names the run chose (`--hip-arch`) or the profile's
//!   default, with a diagnostic saying which and why;
//! - `CUDA_SEPARABLE_COMPILATION ON` (a target property, `set_property`, or
//!   `CMAKE_CUDA_SEPARABLE_COMPILATION`) becomes the target's compile and
//!   link option (`-fgpu-rdc`): CMake has no HIP property for it;
//! - CUDA-only properties the target needs nothing for are deleted, and so
//!   are nvcc options its compiler rejects and needs nothing for; options
//!   forwarded to the host compiler (`-Xcompiler=-Wall,-Wextra`) are written
//!   directly (`-Wall -Wextra`);
//! - `.cu` sources named in `add_executable`, `add_library`,
//!   `target_sources`, `set` and `list(APPEND)` get `LANGUAGE HIP`
//!   (`set_source_files_properties`), since CMake's HIP language compiles
//!   only `.hip` files by default; so do the variables of `file(GLOB ...)`
//!   calls of `.cu` files (`cmake_glob`).
//!
//! What is not one of these forms (a value that is a variable, a property
//! set some other way) is left to the rule tables, which report it.
use cuport_analyze::{cmake_arguments, cmake_commands, CmakeCommand, Site};
use cuport_model::{Code, Effort};
use cuport_model::{Language, OneWayCmake, TextRange};

use super::Planner;
use crate::diagnostic::{codes, Level};

const SEPARABLE: &str = "CUDA_SEPARABLE_COMPILATION";
const SEPARABLE_DEFAULT: &str = "CMAKE_CUDA_SEPARABLE_COMPILATION";

/// Commands whose arguments list source files.
const SOURCE_LISTS: &[&str] = &[
    "add_executable",
    "add_library",
    "target_sources",
    "set",
    "list",
];

impl<'a> Planner<'a> {
    fn one_way_cmake(&self) -> Option<&'static OneWayCmake> {
        if self.for_dual_stack || self.language != Language::Cmake {
            return None;
        }
        self.options
            .planned_target()
            .profile()
            .cmake
            .one_way
            .as_ref()
    }

    /// Ports a CMake site of one of the forms above; false when it is not
    /// one (the rule tables then decide).
    pub(crate) fn cmake_one_way_site(&mut self, site: &Site) -> bool {
        let Some(facts) = self.one_way_cmake() else {
            return false;
        };
        let name = site.name.as_str();
        if name == cuport_analyze::CUDA_ARCHITECTURE_VALUES {
            self.architectures(site, facts);
            return true;
        }
        if name == SEPARABLE
            || name == SEPARABLE_DEFAULT
            || facts.dropped_properties.iter().any(|p| p == name)
        {
            return self.property(site, facts);
        }
        if facts.dropped_flags.iter().any(|f| f == name) {
            return self.drop_flag(site);
        }
        if facts.host_option_forwarders.iter().any(|f| f == name) {
            return self.unwrap_host_options(site);
        }
        false
    }

    pub(super) fn code_of(&self, site: &Site) -> Code {
        self.lookup(&site.name)
            .and_then(|r| r.code())
            .unwrap_or(codes::BUILD_MANUAL)
    }

    pub(super) fn note(&mut self, site: &Site, level: Level, message: String, reference: &str) {
        let code = self.code_of(site);
        let diagnostic = self.diagnose(site, code, level, message);
        diagnostic.reference = Some(reference.to_owned());
    }

    /// A note citing the reference of the rule for `site`'s name.
    fn note_citing_rule(&mut self, site: &Site, message: String) {
        let reference = self
            .lookup(&site.name)
            .and_then(|r| r.reference().map(str::to_owned))
            .unwrap_or_default();
        self.note(site, Level::Note, message, &reference);
    }

    fn architectures(&mut self, site: &Site, facts: &OneWayCmake) {
        let chosen = !self.options.gpu_architectures.is_empty();
        let list = if chosen {
            self.options.gpu_architectures.join(";")
        } else {
            facts.architectures.join(";")
        };
        let written = self.text(site.range);
        let replacement = if written.starts_with('"') {
            format!("\"{list}\"")
        } else {
            list.clone()
        };
        self.edit(site.range, replacement, self.code_of(site), &site.name);
        let why = if chosen {
            "the --hip-arch list".to_owned()
        } else {
            facts.architectures_note.clone()
        };
        let message = format!(
            "NVIDIA architectures `{written}` have no AMD counterpart; written as `{list}` ({why})"
        );
        self.note(site, Level::Approximate, message, &facts.reference);
    }

    /// `CUDA_SEPARABLE_COMPILATION` and the properties the target needs
    /// nothing for, in the three forms a CMake file sets them.
    fn property(&mut self, site: &Site, facts: &OneWayCmake) -> bool {
        let Some(command) = enclosing_command(self.src, site.range.start) else {
            return false;
        };
        let words = cmake_arguments(self.src, command.open + 1, command.close);
        let text = |w: (usize, usize)| self.text(TextRange::new(w.0, w.1));
        let Some(at) = words.iter().position(|&(s, _)| s == site.range.start) else {
            return false;
        };
        let Some(&value) = words.get(at + 1) else {
            return false;
        };
        let Some(on) = truth(text(value)) else {
            return false;
        };
        let rdc = on && (site.name == SEPARABLE || site.name == SEPARABLE_DEFAULT);
        let command_name = command.name.to_ascii_lowercase();
        let indent = indent_at(self.src, command.start);
        let options = |targets: &[&str]| -> String {
            targets
                .iter()
                .map(|t| rdc_lines(&indent, Some(t), &facts.relocatable_device_code))
                .collect()
        };
        match command_name.as_str() {
            "set_target_properties" => {
                let Some(properties) = words.iter().position(|&w| text(w) == "PROPERTIES") else {
                    return false;
                };
                if !words[..properties].iter().all(|&w| self.is_plain_target(w)) {
                    return false;
                }
                let targets: Vec<&str> = words[..properties].iter().map(|&w| text(w)).collect();
                let pairs: Vec<((usize, usize), (usize, usize))> = words[properties + 1..]
                    .chunks(2)
                    .filter_map(|p| Some((p[0], *p.get(1)?)))
                    .collect();
                let handled = |key: &str, value: &str| {
                    (key == SEPARABLE && truth(value).is_some())
                        || facts.dropped_properties.iter().any(|p| p == key)
                };
                let all_handled = pairs.iter().all(|&(k, v)| handled(text(k), text(v)));
                let separable_on = pairs
                    .iter()
                    .any(|&(k, v)| text(k) == SEPARABLE && truth(text(v)) == Some(true));
                let first_handled = pairs.iter().position(|&(k, v)| handled(text(k), text(v)));
                let this = pairs.iter().position(|&(k, _)| k.0 == site.range.start);
                if all_handled {
                    // The whole call goes; the first handled property writes
                    // what replaces it.
                    if this == first_handled {
                        let replacement = if separable_on {
                            options(&targets)
                        } else {
                            String::new()
                        };
                        self.replace_command(&command, &replacement, site);
                    }
                } else {
                    let pair = TextRange::new(site.range.start, value.1);
                    let range = whole_lines_or_blanks(self.src, pair);
                    self.edit(range, String::new(), self.code_of(site), &site.name);
                    if rdc {
                        let at = TextRange::new(command.close + 1, command.close + 1);
                        self.edit(at, options(&targets), self.code_of(site), &site.name);
                    }
                }
                if rdc {
                    self.static_libraries_with_rdc(site, facts, Some(&targets));
                }
            }
            "set_property" => {
                let first = words.first().map(|&w| text(w));
                let property = words.iter().position(|&w| text(w) == "PROPERTY");
                let (Some("TARGET"), Some(property)) = (first, property) else {
                    return false;
                };
                if property + 1 != at || words.len() != at + 2 {
                    return false;
                }
                let targets: Vec<&str> = words[1..property].iter().map(|&w| text(w)).collect();
                let replacement = if rdc {
                    options(&targets)
                } else {
                    String::new()
                };
                self.replace_command(&command, &replacement, site);
                if rdc {
                    self.static_libraries_with_rdc(site, facts, Some(&targets));
                }
            }
            "set" if site.name == SEPARABLE_DEFAULT && at == 0 && words.len() == 2 => {
                if rdc {
                    self.static_libraries_with_rdc(site, facts, None);
                }
                let replacement = if rdc {
                    rdc_lines(&indent, None, &facts.relocatable_device_code)
                } else {
                    String::new()
                };
                self.replace_command(&command, &replacement, site);
            }
            _ => return false,
        }
        let message = if site.name == SEPARABLE || site.name == SEPARABLE_DEFAULT {
            format!(
                "`{}` is written as the {} compile and link option (CMake has no property for it on this target)",
                site.name, facts.relocatable_device_code
            )
        } else {
            format!(
                "`{}` is a CUDA-only property this target needs nothing for; it is deleted",
                site.name
            )
        };
        self.note(site, Level::Note, message, &facts.reference);
        true
    }

    /// Whether the argument at `word` names a target that can be copied
    /// into new commands as it is: no brackets or quotes (`set_target_
    /// properties(()(X)...`, a fuzz finding) and no name cuport rewrites
    /// (a copy of `CMAKE_CUDA_ARCHITECTURES` would be renamed only by a
    /// second run).
    fn is_plain_target(&self, word: (usize, usize)) -> bool {
        let text = &self.src[word.0..word.1];
        !text.is_empty()
            && !text.iter().any(|b| matches!(b, b'(' | b')' | b'"' | b'\''))
            && !self
                .sites
                .iter()
                .any(|s| word.0 <= s.range.start && s.range.end <= word.1)
    }

    /// Relocatable device code in a static library this file adds: where
    /// the target's linker takes device code from an archive only when it is
    /// named with `-l` (`[cmake.one-way] rdc-static-library`), the targets
    /// linking the archive by path, as CMake does, fail their device link.
    fn static_libraries_with_rdc(
        &mut self,
        site: &Site,
        facts: &OneWayCmake,
        targets: Option<&[&str]>,
    ) {
        let Some(note) = facts.rdc_static_library.as_deref() else {
            return;
        };
        let libraries = static_libraries(self.src);
        // No targets: the directory's default (`set(CMAKE_CUDA_SEPARABLE_COMPILATION ON)`).
        let targets: Vec<&str> = match targets {
            Some(targets) => targets.to_vec(),
            None => libraries.iter().map(String::as_str).collect(),
        };
        for target in targets.iter().filter(|t| libraries.iter().any(|l| l == *t)) {
            let message =
                format!("`{target}` is a static library with relocatable device code: {note}");
            let diagnostic = self.diagnose(site, self.code_of(site), Level::Manual, message);
            diagnostic.reference = Some(facts.reference.clone());
            diagnostic.effort = Some(Effort::Low);
        }
    }

    /// Replaces the command call with `replacement` (no text: the call's
    /// whole lines go when nothing else is on them).
    fn replace_command(&mut self, command: &CmakeCommand, replacement: &str, site: &Site) {
        // The lines are written for after the call (`\n` + its indent); in
        // its place, the call's own indent already stands before them.
        let indent = indent_at(self.src, command.start);
        let replacement = replacement.strip_prefix('\n').map_or(replacement, |r| {
            r.strip_prefix(indent.as_str()).unwrap_or(r)
        });
        let call = TextRange::new(command.start, command.close + 1);
        // Edits inside the call (a renamed variable) go with it.
        self.out
            .edits
            .retain(|e| !(call.start <= e.range.start && e.range.end <= call.end));
        let range = if replacement.is_empty() {
            whole_lines_or_blanks(self.src, call)
        } else {
            call
        };
        self.edit(
            range,
            replacement.to_owned(),
            self.code_of(site),
            &site.name,
        );
    }

    fn drop_flag(&mut self, site: &Site) -> bool {
        let Some(command) = enclosing_command(self.src, site.range.start) else {
            return false;
        };
        // `string(APPEND CMAKE_HIP_FLAGS " --expt-relaxed-constexpr")`: the
        // call holds nothing else, so it goes whole.
        let words = cmake_arguments(self.src, command.open + 1, command.close);
        let word = |i: usize| {
            words
                .get(i)
                .map_or("", |&(s, e)| self.text(TextRange::new(s, e)))
        };
        let appends_only_this = command.name.eq_ignore_ascii_case("string")
            && words.len() == 3
            && word(2).trim_matches(['"', ' ', '\t']) == site.name;
        // `set(CMAKE_CUDA_FLAGS "${CMAKE_CUDA_FLAGS} -Wno-deprecated-gpu-targets")`
        // would be left setting the variable to itself.
        let sets_only_this = command.name.eq_ignore_ascii_case("set")
            && words.len() == 2
            && word(1).trim_matches('"').replace(&site.name, "").trim()
                == format!("${{{}}}", word(0));
        let appends_only_this = appends_only_this || sets_only_this;
        // The argument holding the flag: gone whole when nothing else is
        // in it (`$<$<COMPILE_LANGUAGE:CUDA>:--extended-lambda>`), and the
        // call too when only its target and scope would be left.
        let holder = words
            .iter()
            .position(|&(s, e)| s <= site.range.start && site.range.end <= e);
        let alone_in_argument = holder.is_some_and(|i| {
            let (s, e) = words[i];
            let rest = format!(
                "{}{}",
                self.text(TextRange::new(s, site.range.start)),
                self.text(TextRange::new(site.range.end, e))
            );
            rest.trim_matches(['"', ' ', '\t']).is_empty() || is_language_expression_shell(&rest)
        });
        let option_command = OPTION_COMMANDS.contains(&command.name.to_ascii_lowercase().as_str());
        let scope_only = |w: &str| matches!(w, "PRIVATE" | "PUBLIC" | "INTERFACE" | "BEFORE");
        let other_options = words
            .iter()
            .enumerate()
            .skip(usize::from(
                command.name.to_ascii_lowercase().starts_with("target_"),
            ))
            .any(|(i, &(s, e))| Some(i) != holder && !scope_only(self.text(TextRange::new(s, e))));
        if appends_only_this || (option_command && alone_in_argument && !other_options) {
            self.replace_command(&command, "", site);
        } else if let (true, Some(i)) = (alone_in_argument, holder) {
            let range = whole_lines_or_blanks(self.src, TextRange::new(words[i].0, words[i].1));
            self.edit(range, String::new(), self.code_of(site), &site.name);
        } else {
            let range = with_blanks_before(self.src, site.range);
            self.edit(range, String::new(), self.code_of(site), &site.name);
        }
        let note = self
            .lookup(&site.name)
            .and_then(|r| r.note().map(str::to_owned))
            .unwrap_or_default();
        let why = note.strip_prefix("Delete it: ").unwrap_or(&note);
        let message = format!("nvcc's `{}` is deleted: {why}", site.name);
        self.note_citing_rule(site, message);
        true
    }

    /// `-Xcompiler=-Wall,-Wextra` → `-Wall -Wextra`; `-Xcompiler -O2` → `-O2`.
    pub(super) fn unwrap_host_options(&mut self, site: &Site) -> bool {
        let src = self.src;
        let end = site.range.end;
        let (range, replacement) = if src.get(end) == Some(&b'=') {
            let value_end = end
                + src[end..]
                    .iter()
                    .take_while(|b| {
                        !b.is_ascii_whitespace() && !matches!(b, b'"' | b')' | b';' | b'>')
                    })
                    .count();
            let value = self.text(TextRange::new(end + 1, value_end));
            if value.is_empty() {
                return false;
            }
            (
                TextRange::new(site.range.start, value_end),
                value.split(',').collect::<Vec<_>>().join(" "),
            )
        } else {
            let blanks = src[end..]
                .iter()
                .take_while(|b| **b == b' ' || **b == b'\t')
                .count();
            if blanks == 0 {
                return false;
            }
            (
                TextRange::new(site.range.start, end + blanks),
                String::new(),
            )
        };
        let written = self.text(range).trim();
        let message = if replacement.is_empty() {
            format!("this target's compiler takes host compiler options directly: `{written}` is deleted, the option after it stays")
        } else {
            format!("this target's compiler takes host compiler options directly: `{written}` became `{replacement}`")
        };
        self.edit(range, replacement, self.code_of(site), &site.name);
        self.note_citing_rule(site, message);
        true
    }

    /// `set_source_files_properties(a.cu b.cu PROPERTIES LANGUAGE HIP)`
    /// after each command that lists `.cu` sources, unless the file says so
    /// already.
    pub(crate) fn mark_cuda_sources(&mut self) {
        if self.one_way_cmake().is_none() {
            return;
        }
        let language = &self.options.planned_target().profile().cmake.language;
        let src = self.src;
        let commands = cmake_commands(src);
        for (index, command) in commands.iter().enumerate() {
            let name = command.name.to_ascii_lowercase();
            if name == "file" {
                let indent = indent_at(src, command.start);
                self.cuda_glob(command, commands.get(index + 1), language, &indent);
                continue;
            }
            if !SOURCE_LISTS.contains(&name.as_str()) {
                continue;
            }
            let words = cmake_arguments(src, command.open + 1, command.close);
            let mut sources: Vec<&str> = words
                .iter()
                .map(|&(s, e)| self.text(TextRange::new(s, e)))
                .filter(|w| {
                    let path = w.trim_matches('"');
                    path.ends_with(".cu")
                        && !path.contains("$<")
                        && !path.contains(char::is_whitespace)
                })
                .collect();
            sources.dedup();
            if sources.is_empty() {
                continue;
            }
            let marked = commands.get(index + 1).is_some_and(|next| {
                let text = self.text(TextRange::new(next.start, next.close + 1));
                next.name
                    .eq_ignore_ascii_case("set_source_files_properties")
                    && text.contains(&format!("LANGUAGE {language}"))
                    && sources.iter().all(|s| text.contains(s))
            });
            if marked {
                continue;
            }
            let indent = indent_at(src, command.start);
            let line = format!(
                "\n{indent}set_source_files_properties({} PROPERTIES LANGUAGE {language})",
                sources.join(" ")
            );
            let at = TextRange::new(command.close + 1, command.close + 1);
            self.edit(at, line, codes::HIP_SOURCE_LANGUAGE, "(.cu sources)");
        }
    }
}

/// Commands whose arguments are compiler or linker options.
const OPTION_COMMANDS: &[&str] = &[
    "target_compile_options",
    "add_compile_options",
    "target_link_options",
    "add_link_options",
];

/// `$<$<COMPILE_LANGUAGE:CUDA>:>`: a language expression with nothing in it.
fn is_language_expression_shell(text: &str) -> bool {
    let squeezed: String = text
        .chars()
        .filter(|c| !c.is_whitespace() && *c != '"')
        .collect();
    squeezed.starts_with("$<$<") && squeezed.ends_with(":>") && squeezed.matches('<').count() == 2
}

/// CMake's boolean constants (`ON`, `TRUE`, `1`, ... and their negatives);
/// `None` for anything else (a variable).
fn truth(value: &str) -> Option<bool> {
    match value.trim_matches('"').to_ascii_uppercase().as_str() {
        "ON" | "TRUE" | "YES" | "Y" | "1" => Some(true),
        "OFF" | "FALSE" | "NO" | "N" | "0" | "" => Some(false),
        _ => None,
    }
}

/// The libraries `add_library` declares static in `src`: `STATIC`, or no
/// type (static unless BUILD_SHARED_LIBS is set).
fn static_libraries(src: &[u8]) -> Vec<String> {
    cmake_commands(src)
        .into_iter()
        .filter(|c| c.name.eq_ignore_ascii_case("add_library"))
        .filter_map(|c| {
            let words = cmake_arguments(src, c.open + 1, c.close);
            let word = |i: usize| {
                words
                    .get(i)
                    .and_then(|&(s, e)| std::str::from_utf8(&src[s..e]).ok())
            };
            let kind = word(1).unwrap_or("");
            let other = [
                "SHARED",
                "MODULE",
                "OBJECT",
                "INTERFACE",
                "IMPORTED",
                "ALIAS",
                "UNKNOWN",
            ];
            (!other.contains(&kind))
                .then(|| word(0).map(str::to_owned))
                .flatten()
        })
        .collect()
}

/// The compile and link options for relocatable device code, on `target`
/// or (None) for every target of the directory.
fn rdc_lines(indent: &str, target: Option<&str>, option: &str) -> String {
    match target {
        Some(target) => format!(
            "\n{indent}target_compile_options({target} PRIVATE $<$<COMPILE_LANGUAGE:HIP>:{option}>)\n{indent}target_link_options({target} PRIVATE $<$<LINK_LANGUAGE:HIP>:{option}>)"
        ),
        None => format!(
            "\n{indent}add_compile_options($<$<COMPILE_LANGUAGE:HIP>:{option}>)\n{indent}add_link_options($<$<LINK_LANGUAGE:HIP>:{option}>)"
        ),
    }
}

fn enclosing_command(src: &[u8], at: usize) -> Option<CmakeCommand> {
    cmake_commands(src)
        .into_iter()
        .find(|c| c.open < at && at < c.close)
}

/// The leading blanks of the line holding `at`.
fn indent_at(src: &[u8], at: usize) -> String {
    let line_start = src[..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    src[line_start..at]
        .iter()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .map(|&b| b as char)
        .collect()
}

/// `range` widened over the blanks before it.
pub(super) fn with_blanks_before(src: &[u8], range: TextRange) -> TextRange {
    let blanks = src[..range.start]
        .iter()
        .rev()
        .take_while(|b| **b == b' ' || **b == b'\t')
        .count();
    TextRange::new(range.start - blanks, range.end)
}

/// The whole lines `range` spans when nothing else is on them (line break
/// included), else `range` with the blanks before it.
fn whole_lines_or_blanks(src: &[u8], range: TextRange) -> TextRange {
    let line_start = src[..range.start]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let line_end = src[range.end..]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(src.len(), |i| range.end + i);
    let alone = src[line_start..range.start]
        .iter()
        .all(|b| *b == b' ' || *b == b'\t')
        && src[range.end..line_end]
            .iter()
            .all(|b| *b == b' ' || *b == b'\t' || *b == b'\r');
    if alone {
        TextRange::new(line_start, (line_end + 1).min(src.len()))
    } else {
        with_blanks_before(src, range)
    }
}
