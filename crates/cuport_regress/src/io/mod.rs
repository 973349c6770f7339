//! Files legs write: `.npy` and safetensors tensors, `timings.json`.
pub mod npy;
pub mod safetensors;
pub mod timings;

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{RegressError, Result};
use crate::tensor::Tensor;

pub use timings::Timings;

/// Everything a leg left in its output folder.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LegFiles {
    pub tensors: BTreeMap<String, Tensor>,
    pub timings: Option<Timings>,
}

/// Read every `*.npy` (named by file stem) and `*.safetensors` (named by
/// key) in `dir`, and `timings.json` if present.
pub fn read_leg_dir(dir: &Path) -> Result<LegFiles> {
    let mut files = LegFiles::default();
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .map_err(|e| RegressError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    paths.sort();
    for path in paths {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let loaded = match ext {
            "npy" => {
                let name = path
                    .file_stem()
                    .and_then(|s| s.to_str())
                    .unwrap_or("")
                    .to_owned();
                vec![(name, npy::read(&path)?)]
            }
            "safetensors" => safetensors::read(&path)?,
            _ => continue,
        };
        for (name, tensor) in loaded {
            if files.tensors.insert(name.clone(), tensor).is_some() {
                return Err(RegressError::format(
                    &path,
                    format!("tensor `{name}` is written twice in this leg's output; give each output a unique name"),
                ));
            }
        }
    }
    let timings = dir.join("timings.json");
    if timings.exists() {
        files.timings = Some(timings::read(&timings)?);
    }
    Ok(files)
}
