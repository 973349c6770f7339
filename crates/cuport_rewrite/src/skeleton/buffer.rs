//! The global-memory buffers of an Ascend C kernel skeleton: one per
//! pointer parameter, with the names of its queues and local tensors.
use super::params::{ascend_type, camel_case, Param, ParamKind};

/// A global-memory buffer the pipeline moves through a queue.
pub(super) struct Buffer {
    pub(super) name: String,
    pub(super) element: String,
    pub(super) input: bool,
    pub(super) output: bool,
}

impl Buffer {
    pub(super) fn gm(&self) -> String {
        format!("{}Gm", self.name)
    }
    pub(super) fn local(&self) -> String {
        format!("{}Local", self.name)
    }
    pub(super) fn in_queue(&self) -> String {
        format!("inQueue{}", camel_case(&self.name))
    }
    pub(super) fn out_queue(&self) -> String {
        format!("outQueue{}", camel_case(&self.name))
    }
}

/// One buffer per pointer parameter, in order.
pub(super) fn buffers(params: &[Param]) -> Vec<Buffer> {
    let pointers: Vec<(&str, &str, bool)> = params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Pointer {
                element,
                is_const,
                indirect: false,
            } => Some((p.name.as_str(), element.as_str(), *is_const)),
            _ => None,
        })
        .collect();
    let any_const = pointers.iter().any(|p| p.2);
    pointers
        .into_iter()
        .map(|(name, element, is_const)| Buffer {
            name: name.to_owned(),
            element: ascend_type(element),
            input: is_const || !any_const,
            output: !is_const,
        })
        .collect()
}
