//! Checks across entries and files, run after everything is added: patterns
//! that shadow explicit entries or each other, dangling exceptions, enum maps
//! with gaps.
use std::collections::HashMap;

use crate::builder::Builder;
use crate::diag::{DiagKind, Location};
use crate::model::Flavour;
use crate::raw::{RawEnumMap, RawPattern};
use crate::ruleset::{Glob, Layer};
use crate::source::Parsed;

/// Which pattern first mapped a CUDA name, per target and flavour.
type Claimed = HashMap<(cuport_model::Target, Flavour, String), (String, Location, i32)>;

impl Builder {
    pub(crate) fn cross_check(&mut self, parsed: &[std::sync::Arc<Parsed>]) {
        let mut claimed: Claimed = HashMap::new();
        for p in parsed {
            let Some(target) = p.target() else { continue };
            for pattern in &p.file.pattern {
                self.check_pattern(p, target, pattern, &mut claimed);
            }
            for map in &p.file.enum_map {
                self.check_enum_map(p, map);
                self.check_enum_map_targets(p, target, map);
            }
        }
    }

    fn check_pattern(
        &mut self,
        p: &Parsed,
        target: cuport_model::Target,
        raw: &RawPattern,
        claimed: &mut Claimed,
    ) {
        let (Some(from), Some(to)) = (Glob::parse(raw.from.get_ref()), Glob::parse(&raw.to)) else {
            return;
        };
        let exceptions: Vec<&str> = raw
            .exceptions
            .iter()
            .map(|e| e.get_ref().as_str())
            .collect();
        for name in &raw.exists {
            let Some(mid) = to.capture(name.get_ref()) else {
                continue;
            };
            let cuda = from.expand(mid);
            if exceptions.contains(&cuda.as_str()) {
                continue;
            }
            self.check_shadow(p, target, raw, name, &cuda);
            let key = (target, p.flavour(), cuda.clone());
            match claimed.get(&key) {
                Some((other, first, prio)) if *prio == p.priority => {
                    let (kind, what) = if other == name.get_ref() {
                        (DiagKind::Duplicate, "also")
                    } else {
                        (DiagKind::Conflict, "differently")
                    };
                    let msg = format!("`{cuda}` → `{}`: another pattern (at {first}) {what} maps it to `{other}`; list the target name in one pattern only", name.get_ref());
                    self.error(p.at(name), kind, msg);
                }
                _ => {
                    claimed.insert(key, (name.get_ref().clone(), p.at(name), p.priority));
                }
            }
        }
        for exception in &raw.exceptions {
            self.check_exception(p, target, &from, raw, exception);
        }
    }

    fn check_shadow(
        &mut self,
        p: &Parsed,
        target: cuport_model::Target,
        raw: &RawPattern,
        name: &toml::Spanned<String>,
        cuda: &str,
    ) {
        let Some(layer) = self.layer(target, p.flavour()) else {
            return;
        };
        let Some(explicit) = layer.explicit.get(cuda) else {
            return;
        };
        if explicit.slot.priority != p.priority {
            return;
        }
        let first = self.set.rules[explicit.slot.rule].origin.clone();
        let msg = format!(
            "pattern {} (`{}` → `{}`) would map `{cuda}` to `{}`, shadowing the explicit entry at {first}; add `{cuda}` to the pattern's `exceptions` or drop `{}` from `exists`",
            raw.code.get_ref(), raw.from.get_ref(), raw.to, name.get_ref(), name.get_ref()
        );
        self.error(p.at(name), DiagKind::ShadowedByPattern, msg);
    }

    fn check_exception(
        &mut self,
        p: &Parsed,
        target: cuport_model::Target,
        from: &Glob,
        raw: &RawPattern,
        exception: &toml::Spanned<String>,
    ) {
        let name = exception.get_ref();
        let msg = if from.capture(name).is_none() {
            format!(
                "exception `{name}` does not match the pattern's `from` glob `{}`; remove it",
                raw.from.get_ref()
            )
        } else if self
            .layer(target, p.flavour())
            .is_some_and(|l| l.explicit.contains_key(name))
        {
            return;
        } else {
            format!("exception `{name}` has no explicit entry or unsupported listing for {target}; add one (so the name is not silently unmapped) or remove the exception")
        };
        self.error(p.at(exception), DiagKind::DanglingException, msg);
    }

    fn layer(&self, target: cuport_model::Target, flavour: Flavour) -> Option<&Layer> {
        self.set.tables.get(&target)?.layer(flavour)
    }

    fn check_enum_map(&mut self, p: &Parsed, m: &RawEnumMap) {
        let enum_name = m.cuda_enum.get_ref();
        let Some(values) = self.set.cuda_enums.get(enum_name).cloned() else {
            let msg = format!("enum map `{}` names CUDA enum `{enum_name}`, which no [[cuda-enum]] declares; declare it in mappings/cuda/", m.name.get_ref());
            return self.error(p.at(&m.cuda_enum), DiagKind::UnknownName, msg);
        };
        let map = m.map.get_ref();
        let strangers: Vec<&str> = map
            .keys()
            .filter(|k| !values.contains(k))
            .map(String::as_str)
            .collect();
        if !strangers.is_empty() {
            let msg = format!(
                "enum map `{}` maps {} which are not values of `{enum_name}`",
                m.name.get_ref(),
                quoted(&strangers)
            );
            self.error(p.at(&m.map), DiagKind::UnknownName, msg);
        }
        let gaps: Vec<&str> = values
            .iter()
            .filter(|v| !map.contains_key(*v) && !m.unmapped.contains(v))
            .map(String::as_str)
            .collect();
        if !gaps.is_empty() {
            let msg = format!("enum map `{}` leaves {} of `{enum_name}` unmapped; map them or list them in `unmapped`", m.name.get_ref(), quoted(&gaps));
            self.error(p.at(&m.map), DiagKind::EnumGap, msg);
        }
    }
}

impl Builder {
    /// Every value an enum map produces must be an enumerator of the
    /// target enum it names (or an `|` of them, for flag enums), so a typo
    /// cannot reach ported code.
    fn check_enum_map_targets(&mut self, p: &Parsed, target: cuport_model::Target, m: &RawEnumMap) {
        let Some(enum_name) = &m.target_enum else {
            return;
        };
        let declared = self
            .set
            .tables
            .get(&target)
            .and_then(|t| t.enums.get(enum_name.get_ref()));
        let Some(declared) = declared else {
            let msg = format!("enum map `{}` names target enum `{}`, which no [[enum]] of {target} declares; declare it or fix the name", m.name.get_ref(), enum_name.get_ref());
            return self.error(p.at(enum_name), DiagKind::UnknownName, msg);
        };
        let enumerators: Vec<&str> = declared.iter().map(|v| enumerator_name(v)).collect();
        let strangers: Vec<&str> = m
            .map
            .get_ref()
            .values()
            .map(String::as_str)
            .filter(|v| !v.split('|').all(|part| enumerators.contains(&part.trim())))
            .collect();
        if !strangers.is_empty() {
            let msg = format!(
                "enum map `{}` produces {}, which `{}` does not declare; fix the values or add them to the [[enum]]",
                m.name.get_ref(),
                quoted(&strangers),
                enum_name.get_ref()
            );
            self.error(p.at(&m.map), DiagKind::UnknownName, msg);
        }
    }
}

/// `ACL_MEMCPY_HOST_TO_DEVICE = 1` → `ACL_MEMCPY_HOST_TO_DEVICE`.
fn enumerator_name(value: &str) -> &str {
    value.split('=').next().unwrap_or(value).trim()
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}
