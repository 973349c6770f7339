//! Python sites in dual-stack mode (being written): rewritten to use the
//! generated `cuport_device` module instead of one target's names.
use cuport_analyze::Site;

use crate::plan::Planner;

/// Plans one Python site for a dual-stack run.
pub(crate) fn plan_site(planner: &mut Planner<'_>, site: &Site) {
    let _ = (planner, site);
}
