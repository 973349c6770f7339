//! cuport's regression harness (issue 7): run the same cases on two or more
//! backends, compare accuracy against an f64 oracle and performance against
//! a baseline, and gate CI.
//!
//! Layers, bottom up: [`dtype`], [`tensor`], [`rng`] (inputs), [`ops`]
//! (specs + f64 reference), [`metrics`] and [`policy`] (accuracy),
//! [`stats`] and [`sampling`] (performance), [`case`] (TOML files).
pub mod case;
pub mod dtype;
pub mod error;
pub mod evidence;
pub mod metrics;
pub mod ops;
pub mod policy;
pub mod rng;
pub mod sampling;
pub mod stats;
pub mod tensor;

pub use error::{RegressError, Result};
pub mod backend;
pub mod baseline;
pub mod device;
pub mod exec;
pub mod interrupt;
pub mod io;
pub mod leg;
pub mod memory;
pub mod placement;
pub mod render;
pub mod report;
pub mod run;
pub mod slurm;
