//! Preprocessor directives: CUDA includes, `#if`-family conditions (and the
//! CUDA macros tested in them), and the project's own `#define`s.
use cuport_model::{Library, SiteKind};

use super::classify::{header_library, is_cuda_condition_macro, is_predefined_macro};
use super::lexer::TokKind;
use super::{Directive, Scanner};
use crate::site::Site;

impl Scanner<'_> {
    /// Handles the directive whose `#` is token `i`; returns the next token
    /// to visit.
    pub(super) fn directive(&mut self, i: usize) -> usize {
        let end = self.directive_end(i);
        let name = if self.kind_at(i + 1) == Some(TokKind::Ident) && i + 1 < end {
            self.text(i + 1)
        } else {
            ""
        };
        let line = self.line_of(i);
        self.directive = Some(Directive::Other);
        match name {
            "include" | "include_next" | "import" => self.include(i + 2, end),
            "define" => return self.define(i + 2, end),
            "if" | "elif" => {
                let text = self.condition_text(i + 2, end);
                self.condition_sites(i + 2, end);
                if name == "if" {
                    self.conditions.open(text, line);
                } else {
                    self.conditions.next_branch(Some(text), line);
                }
            }
            "ifdef" | "ifndef" | "elifdef" | "elifndef" => {
                self.condition_sites(i + 2, end);
                let macro_name = if i + 2 < end { self.text(i + 2) } else { "" };
                let text = if name.ends_with("ndef") {
                    format!("!defined({macro_name})")
                } else {
                    format!("defined({macro_name})")
                };
                if name.starts_with("elif") {
                    self.conditions.next_branch(Some(text), line);
                } else {
                    self.conditions.open(text, line);
                }
            }
            "else" => self.conditions.next_branch(None, line),
            "endif" => self.conditions.close(),
            _ => {}
        }
        end
    }

    /// Index of the `DirectiveEnd` closing the directive that starts at `i`.
    fn directive_end(&self, i: usize) -> usize {
        (i + 1..self.tokens.len())
            .find(|&k| self.tokens[k].kind == TokKind::DirectiveEnd)
            .unwrap_or(self.tokens.len())
    }

    fn line_of(&self, i: usize) -> u32 {
        self.line_index.line_col(self.tokens[i].start as usize).line
    }

    fn include(&mut self, path_token: usize, end: usize) {
        if path_token >= end {
            return;
        }
        let kind = self.tokens[path_token].kind;
        if !matches!(kind, TokKind::HeaderName | TokKind::Str) {
            return;
        }
        let quoted = self.text(path_token);
        let path = quoted
            .trim_start_matches(['<', '"'])
            .trim_end_matches(['>', '"']);
        if let Some(library) = header_library(path) {
            let site = Site::new(
                SiteKind::Include,
                library,
                path,
                self.range(path_token, path_token),
            );
            self.push(site);
        }
    }

    /// `#define NAME body`: the name is the project's own; the body is code.
    fn define(&mut self, name_token: usize, end: usize) -> usize {
        self.directive = Some(Directive::Define);
        if name_token >= end || self.kind_at(name_token) != Some(TokKind::Ident) {
            return name_token;
        }
        let name = self.text(name_token);
        if self.is_own_include_guard(name) {
            // `#ifndef __CUDA_MACRO_H__` / `#define __CUDA_MACRO_H__` opening
            // the project's own header (HeCBench ising's cudamacro.h): a
            // guard named like CUDA's that no CUDA header uses is the
            // project's, and so is the test of it.
            self.sites.pop();
            self.defined_names.push(name.to_owned());
        } else if is_cuda_condition_macro(name) {
            // A project that defines `__CUDACC__` or a CUDA include guard is
            // faking CUDA's environment: that is a touchpoint in itself.
            let site = Site::new(
                SiteKind::Macro,
                Library::Preprocessor,
                name,
                self.range(name_token, name_token),
            );
            self.push(site);
        } else {
            self.defined_names.push(name.to_owned());
        }
        name_token + 1
    }

    /// Whether `#define NAME` completes the file's include guard: the one
    /// site so far is the `#ifndef NAME` test before it, and the tables
    /// know no CUDA header guarded by that name (a project defining
    /// `__CUDA_RUNTIME_H__` fakes CUDA's header, and that stays reported).
    fn is_own_include_guard(&self, name: &str) -> bool {
        matches!(self.sites.as_slice(), [only] if only.name == name && only.kind == SiteKind::PreprocessorCondition)
            && self.table_name(name).is_none()
            && !is_predefined_macro(name)
    }

    fn condition_sites(&mut self, from: usize, end: usize) {
        for k in from..end {
            if self.tokens[k].kind != TokKind::Ident {
                continue;
            }
            let name = self.text(k);
            // A macro (CUDA's, or one the tables know) is a preprocessor
            // test; any other name the tables know (`#ifdef
            // cuDeviceGetUuid_v2`) keeps its library.
            let library = match self.table_name(name) {
                _ if is_cuda_condition_macro(name) => Some(Library::Preprocessor),
                Some((_, SiteKind::Macro)) => Some(Library::Preprocessor),
                Some((library, _)) => Some(library),
                None => None,
            };
            if let Some(library) = library {
                let site = Site::new(
                    SiteKind::PreprocessorCondition,
                    library,
                    name,
                    self.range(k, k),
                );
                self.push(site);
            }
        }
    }

    /// The condition as normalised text: tokens joined by single spaces,
    /// with none inside parentheses or after `!`.
    fn condition_text(&self, from: usize, end: usize) -> String {
        let mut text = String::new();
        let mut previous: Option<TokKind> = None;
        for k in from..end {
            let kind = self.tokens[k].kind;
            let glue = matches!(previous, None | Some(TokKind::Punct(b'(' | b'!')))
                || matches!(kind, TokKind::Punct(b')' | b','))
                || (kind == TokKind::Punct(b'(') && previous == Some(TokKind::Ident));
            if !glue {
                text.push(' ');
            }
            text.push_str(self.text(k));
            previous = Some(kind);
        }
        text
    }
}
