//! Dual-stack mode: the source is rewritten once to portable names
//! (`cuportMalloc`, `cuportStream_t`, `cuport_device.device_type`) and a
//! generated shim maps them to CUDA (the default, zero-cost) or to one of the
//! targets, chosen at build time. Everything the shim says comes from the same
//! rule tables as the one-way migration.
pub(crate) mod python;
pub(crate) mod python_module;
