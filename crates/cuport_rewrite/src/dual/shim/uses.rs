//! The `cuport-uses` lines of a generated shim header: the CUDA headers and
//! names the project used when the shim was generated. The portable source
//! no longer spells them, so a later run reads them back from here.
use std::path::Path;

use cuport_rules::NameKind;

use super::ProjectUse;
use crate::dual::names::shim_header;

const PREFIX: &str = "/* cuport-uses ";
const WIDTH: usize = 96;

pub(crate) fn kind_id(kind: NameKind) -> &'static str {
    match kind {
        NameKind::Type => "type",
        NameKind::EnumValue | NameKind::Macro => "value",
        _ => "function",
    }
}

fn kind_from_id(id: &str) -> NameKind {
    match id {
        "type" => NameKind::Type,
        "value" => NameKind::EnumValue,
        _ => NameKind::Function,
    }
}

/// `/* cuport-uses KEY: a b c */`, wrapped over several lines.
pub(crate) fn write_line(out: &mut String, key: &str, items: &[&str]) {
    let mut line = String::new();
    for item in items {
        if !line.is_empty() && line.len() + item.len() > WIDTH {
            out.push_str(&format!("{PREFIX}{key}:{line} */\n"));
            line.clear();
        }
        line.push(' ');
        line.push_str(item);
    }
    if !line.is_empty() {
        out.push_str(&format!("{PREFIX}{key}:{line} */\n"));
    }
}

/// Adds what the shim headers under `root/cuport/` record to `project`.
pub(crate) fn read_previous(root: &Path, project: &mut ProjectUse) {
    for library in cuport_model::Library::ALL {
        let Some(file) = shim_header(library) else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(root.join("cuport").join(file)) else {
            continue;
        };
        if !cuport_model::is_cuport_generated(text.as_bytes()) {
            continue;
        }
        // The header itself says the library was used.
        project.includes.entry(library).or_default();
        for rest in text.lines().filter_map(|l| l.strip_prefix(PREFIX)) {
            let rest = rest.trim_end_matches("*/").trim();
            if let Some(items) = rest.strip_prefix("includes:") {
                let includes = project.includes.entry(library).or_default();
                includes.extend(items.split_whitespace().map(str::to_owned));
            } else if let Some(items) = rest.strip_prefix("names:") {
                let names = project.names.entry(library).or_default();
                for item in items.split_whitespace() {
                    if let Some((kind, name)) = item.split_once(':') {
                        names.insert(name.to_owned(), kind_from_id(kind));
                    }
                }
            }
        }
    }
}
