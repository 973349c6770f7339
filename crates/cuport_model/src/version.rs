//! Vendor SDK versions (`CANN 8.2.RC1`, `HIP 5.2.0`) and the minimum
//! versions rules hold from (`CANN >= 9.1.0`), so a port can be made for the
//! SDK a user has.
use std::cmp::Ordering;
use std::fmt;

/// A release number: `MAJOR.MINOR` then a patch (`9.1.0`) or a release
/// candidate (`8.2.RC1`), which comes before the final release of its
/// minor version. A bare `8.0` stands for the first release of 8.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Deserialize)]
#[serde(try_from = "String")]
pub struct SdkVersion {
    major: u32,
    minor: u32,
    stage: Stage,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Stage {
    /// `8.0`: before every release of the minor version.
    Earliest,
    ReleaseCandidate(u32),
    Final(u32),
}

/// Why a version string was not understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a version; write MAJOR.MINOR.PATCH (9.1.0) or MAJOR.MINOR.RCn (8.2.RC1)")]
pub struct VersionError(pub String);

impl SdkVersion {
    /// Parses `9.1.0`, `8.2.RC1`, `8.0` (also `8.2.rc1`, `v6.2`).
    pub fn parse(text: &str) -> Result<SdkVersion, VersionError> {
        let error = || VersionError(text.to_owned());
        let trimmed = text.trim();
        let bare = trimmed.strip_prefix(['v', 'V']).unwrap_or(trimmed);
        let mut parts = bare.split('.');
        let number = |part: Option<&str>| part.and_then(|p| p.parse::<u32>().ok());
        let major = number(parts.next()).ok_or_else(error)?;
        let minor = number(parts.next()).ok_or_else(error)?;
        let stage = match parts.next() {
            None => Stage::Earliest,
            Some(third) => match third.get(..2) {
                Some(rc) if rc.eq_ignore_ascii_case("rc") => {
                    Stage::ReleaseCandidate(third[2..].parse().map_err(|_| error())?)
                }
                _ => Stage::Final(third.parse().map_err(|_| error())?),
            },
        };
        // A fourth part (`6.2.41133`, a build number) is accepted and ignored.
        if parts.clone().any(|p| p.parse::<u32>().is_err()) || parts.count() > 1 {
            return Err(error());
        }
        Ok(SdkVersion {
            major,
            minor,
            stage,
        })
    }
}

/// Profiles name releases as strings; a malformed one fails the load.
impl TryFrom<String> for SdkVersion {
    type Error = VersionError;

    fn try_from(text: String) -> Result<Self, Self::Error> {
        SdkVersion::parse(&text)
    }
}

impl Ord for SdkVersion {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.major, self.minor, self.stage).cmp(&(other.major, other.minor, other.stage))
    }
}

impl PartialOrd for SdkVersion {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for SdkVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // `pad` so that `{:<24}` in aligned listings works.
        f.pad(&match self.stage {
            Stage::Earliest => format!("{}.{}", self.major, self.minor),
            Stage::ReleaseCandidate(n) => format!("{}.{}.RC{n}", self.major, self.minor),
            Stage::Final(patch) => format!("{}.{}.{patch}", self.major, self.minor),
        })
    }
}

/// `PRODUCT >= VERSION` at the start of a rule's `target-version`
/// (`CANN >= 9.1.0`, `HIP >= 5.2.0 (...)`); free text states no minimum.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MinimumVersion {
    pub product: String,
    pub version: SdkVersion,
}

impl MinimumVersion {
    /// The minimum a `target-version` text states, if it states one.
    pub fn from_text(text: &str) -> Option<MinimumVersion> {
        let (product, rest) = text.trim().split_once(">=")?;
        let product = product.trim();
        let valid_product = !product.is_empty()
            && product
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == ' ' || c == '-');
        if !valid_product {
            return None;
        }
        let version = rest.split_whitespace().next()?.trim_end_matches([',', ';']);
        Some(MinimumVersion {
            product: product.to_owned(),
            version: SdkVersion::parse(version).ok()?,
        })
    }

    /// Whether `selected` (of the same product) is too old for the rule.
    pub fn excludes(&self, selected: &SdkVersion) -> bool {
        selected < &self.version
    }
}

impl fmt::Display for MinimumVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} >= {}", self.product, self.version)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn v(text: &str) -> SdkVersion {
        SdkVersion::parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn release_candidates_come_before_the_final_release() {
        assert!(v("8.2.RC1") < v("8.2.0"));
        assert!(v("8.2.RC1") < v("8.2.RC2"));
        assert!(v("8.0.0") < v("8.2.RC1"));
        assert!(v("8.5.0") < v("9.1.0"));
        assert!(v("8.0") < v("8.0.RC1"));
        assert!(v("6.2") < v("6.2.0"));
        assert_eq!(v("8.2.rc1"), v("8.2.RC1"));
        assert_eq!(v("v6.2.4").to_string(), "6.2.4");
        assert!(v("6.2.41133.1") > v("6.2.4"));
    }

    #[test]
    fn malformed_versions_are_errors() {
        for bad in ["", "9", "x.1", "8.2.RCx", "8.2.1.x", "8..1", "8.2.1.2.3"] {
            assert!(SdkVersion::parse(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn minimums_are_read_from_the_start_of_the_text() {
        let m = MinimumVersion::from_text("CANN >= 8.0 (ASC language: recent CANN)").unwrap();
        assert_eq!(
            (m.product.as_str(), m.version.to_string()),
            ("CANN", "8.0".into())
        );
        assert!(m.excludes(&v("7.0.0")));
        assert!(!m.excludes(&v("8.0.RC1")));
        let hip = MinimumVersion::from_text("HIP >= 5.2.0").unwrap();
        assert!(hip.excludes(&v("5.1.3")));
        assert!(!hip.excludes(&v("5.2.0")));
        assert!(MinimumVersion::from_text("MUSA Toolkit with musa-toolkit-cmake").is_none());
        assert!(MinimumVersion::from_text("ROCm >= 5.0, CMake >= 3.21").is_some());
    }
}
