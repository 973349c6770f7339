//! The dual-stack planner's state: the shared planning context plus what
//! only dual-stack planning needs. It derefs to the context, so the dual
//! rules read like the one-way ones.
use std::ops::{Deref, DerefMut};

use cuport_model::TextRange;

use crate::options::MigrateOptions;
use crate::plan::Planner;

pub(crate) struct DualPlanner<'a> {
    pub(crate) base: Planner<'a>,
    /// One-way options for each dual target (diagnostics come from them).
    pub(crate) per_target: &'a [MigrateOptions],
    /// `../` per directory level: the shim headers are included relative to
    /// the file, so the CUDA build needs no new include path.
    pub(crate) prefix: String,
    /// Launches to rewrite once inner edits are known.
    pub(crate) launches: Vec<Launch>,
}

#[derive(Debug)]
pub(crate) struct Launch {
    pub(crate) call: TextRange,
    pub(crate) kernel: TextRange,
    pub(crate) config: Vec<TextRange>,
    pub(crate) args: Vec<TextRange>,
    pub(crate) cuda_name: String,
    /// The function the backends with operators call instead (a
    /// `[[kernel]]` rule maps the kernel).
    pub(crate) operator_function: Option<String>,
    /// The rule's launch values the function takes after the arguments.
    pub(crate) operator_values: Vec<String>,
}

impl<'a> Deref for DualPlanner<'a> {
    type Target = Planner<'a>;
    fn deref(&self) -> &Planner<'a> {
        &self.base
    }
}

impl DerefMut for DualPlanner<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.base
    }
}
