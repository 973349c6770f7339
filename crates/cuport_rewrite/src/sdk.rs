//! Which rules a port made for one SDK release (`--cann-version`,
//! `--rocm-version`) may use: a rule whose `target-version` names a newer
//! release of the target's SDK does not apply.
use cuport_model::{MinimumVersion, SdkVersion, Target};
use cuport_rules::Resolved;

/// The minimum release `resolved` needs when `selected` is older than it;
/// `None` when the rule applies (no release selected, no minimum stated,
/// or a minimum of another product).
pub(crate) fn newer_release_needed(
    resolved: &Resolved<'_>,
    target: Target,
    selected: Option<SdkVersion>,
) -> Option<MinimumVersion> {
    let selected = selected?;
    let minimum = resolved.minimum_version()?;
    let product = target.profile().versions.product.as_deref()?;
    let same_product = product.eq_ignore_ascii_case(&minimum.product);
    (same_product && minimum.excludes(&selected)).then(|| minimum.clone())
}
