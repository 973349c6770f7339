//! How much host memory an op case may use: limits as users write them
//! (`8GiB`, `500MB`, `1.5G`, `50%`), this machine's memory, and the
//! default limit (half of it).
//!
//! The limit exists so that one oversized case fails alone, before
//! anything is allocated, instead of aborting the whole run: Rust aborts
//! the process when an allocation fails, and no handler can turn that
//! into an error.
use std::fmt;

use serde::{Deserialize, Serialize};

/// Share of this machine's memory an op case may use by default.
pub const DEFAULT_SHARE: f64 = 0.5;

/// Assumed when this machine's memory cannot be read.
const FALLBACK_BYTES: u64 = 8 << 30;

/// A memory limit: a byte count, or a share of this machine's memory.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RawLimit", into = "String")]
pub enum MemoryLimit {
    Bytes(u64),
    /// In (0, 1].
    Share(f64),
}

/// What case files may hold: `"8GiB"`, `"50%"` or a plain byte count.
#[derive(Deserialize)]
#[serde(untagged)]
enum RawLimit {
    Text(String),
    Bytes(u64),
}

impl TryFrom<RawLimit> for MemoryLimit {
    type Error = String;

    fn try_from(raw: RawLimit) -> Result<Self, String> {
        match raw {
            RawLimit::Text(text) => text.parse(),
            RawLimit::Bytes(0) => Err(SIZE_HELP.replace("{}", "0")),
            RawLimit::Bytes(n) => Ok(MemoryLimit::Bytes(n)),
        }
    }
}

impl From<MemoryLimit> for String {
    fn from(limit: MemoryLimit) -> String {
        limit.to_string()
    }
}

const SIZE_HELP: &str = "`{}` is not a memory size: write a positive number with an optional unit, e.g. `8GiB`, `500MB`, `1.5G` (= GiB), `4096` (bytes), or a share of this machine's memory such as `50%`";

impl std::str::FromStr for MemoryLimit {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let help = || SIZE_HELP.replace("{}", text);
        let text = text.trim();
        if let Some(percent) = text.strip_suffix('%') {
            let share = percent.trim().parse::<f64>().map_err(|_| help())? / 100.0;
            return if share > 0.0 && share <= 1.0 {
                Ok(MemoryLimit::Share(share))
            } else {
                Err(format!(
                    "`{text}`: a share of this machine's memory must be above 0% and at most 100%"
                ))
            };
        }
        let split = text
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(text.len());
        let (number, unit) = text.split_at(split);
        let number: f64 = number.parse().map_err(|_| help())?;
        let factor = unit_factor(unit.trim()).ok_or_else(help)?;
        let bytes = (number * factor).round();
        // 2^64 as f64; anything at or above it does not fit a u64.
        if !(1.0..18_446_744_073_709_551_616.0).contains(&bytes) {
            return Err(help());
        }
        Ok(MemoryLimit::Bytes(bytes as u64))
    }
}

/// Bytes per unit; `K`, `M`, `G`, `T` alone are binary, as in Slurm's
/// `--mem` and Docker's `--memory`.
fn unit_factor(unit: &str) -> Option<f64> {
    let power = |base: f64, exp: i32| Some(base.powi(exp));
    match unit.to_ascii_lowercase().as_str() {
        "" | "b" => Some(1.0),
        "k" | "kib" => power(1024.0, 1),
        "m" | "mib" => power(1024.0, 2),
        "g" | "gib" => power(1024.0, 3),
        "t" | "tib" => power(1024.0, 4),
        "kb" => power(1000.0, 1),
        "mb" => power(1000.0, 2),
        "gb" => power(1000.0, 3),
        "tb" => power(1000.0, 4),
        _ => None,
    }
}

impl fmt::Display for MemoryLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            MemoryLimit::Bytes(n) => {
                // Exact, so that a limit printed and read back is the same.
                let units = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
                match units
                    .iter()
                    .find(|(_, shift)| n >= 1 << shift && n % (1 << shift) == 0)
                {
                    Some((unit, shift)) => write!(f, "{}{unit}", n >> shift),
                    None => write!(f, "{n}"),
                }
            }
            MemoryLimit::Share(s) => write!(f, "{}%", s * 100.0),
        }
    }
}

impl MemoryLimit {
    /// The limit in bytes on a machine with `machine` bytes of memory.
    pub fn bytes(self, machine: u64) -> u64 {
        match self {
            MemoryLimit::Bytes(n) => n,
            MemoryLimit::Share(s) => (machine as f64 * s) as u64,
        }
    }
}

/// `80.0 GiB`, `512.0 MiB`, `100 B`: binary units, one decimal.
pub fn human_bytes(bytes: u128) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

/// This machine's memory and where the number came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineMemory {
    pub bytes: u64,
    /// `/proc/meminfo`, `cgroup memory.max`, `sysconf` or `assumed`.
    pub source: &'static str,
}

impl MachineMemory {
    /// Physical memory, lowered to the cgroup's limit when this process
    /// runs in a container that has one; 8 GiB when nothing can be read.
    pub fn detect() -> MachineMemory {
        let physical = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|t| meminfo_total(&t))
            .map(|bytes| MachineMemory {
                bytes,
                source: "/proc/meminfo",
            })
            .or_else(sysconf_memory)
            .unwrap_or(MachineMemory {
                bytes: FALLBACK_BYTES,
                source: "assumed",
            });
        let cgroup = [
            "/sys/fs/cgroup/memory.max",
            "/sys/fs/cgroup/memory/memory.limit_in_bytes",
        ]
        .iter()
        .find_map(|p| {
            std::fs::read_to_string(p)
                .ok()
                .and_then(|t| cgroup_limit(&t))
        });
        match cgroup {
            Some(limit) if limit < physical.bytes => MachineMemory {
                bytes: limit,
                source: "cgroup memory limit",
            },
            _ => physical,
        }
    }

    /// The default limit of one case: [`DEFAULT_SHARE`] of this memory.
    pub fn default_limit(&self) -> u64 {
        MemoryLimit::Share(DEFAULT_SHARE).bytes(self.bytes)
    }
}

/// `MemTotal:  24683568 kB` → bytes.
fn meminfo_total(text: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    kib.checked_mul(1024)
}

/// cgroup v2 `memory.max` (`max` = none) or v1 `memory.limit_in_bytes`
/// (a huge number = none).
fn cgroup_limit(text: &str) -> Option<u64> {
    let value: u64 = text.trim().parse().ok()?;
    (value < 1 << 60).then_some(value)
}

#[allow(unsafe_code)]
fn sysconf_memory() -> Option<MachineMemory> {
    // Safety: sysconf(3) only reads system configuration values; it takes
    // no pointers and touches no Rust memory.
    let (pages, page_size) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    let bytes = u64::try_from(pages)
        .ok()?
        .checked_mul(u64::try_from(page_size).ok()?)?;
    (bytes > 0).then_some(MachineMemory {
        bytes,
        source: "sysconf",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<MemoryLimit, String> {
        text.parse()
    }

    #[test]
    fn sizes_parse_with_binary_and_decimal_units() {
        assert_eq!(parse("8GiB"), Ok(MemoryLimit::Bytes(8 << 30)));
        assert_eq!(parse("8G"), Ok(MemoryLimit::Bytes(8 << 30)));
        assert_eq!(parse("500MB"), Ok(MemoryLimit::Bytes(500_000_000)));
        assert_eq!(parse(" 1.5 gib "), Ok(MemoryLimit::Bytes(3 << 29)));
        assert_eq!(parse("4096"), Ok(MemoryLimit::Bytes(4096)));
        assert_eq!(parse("2k"), Ok(MemoryLimit::Bytes(2048)));
        assert_eq!(parse("50%"), Ok(MemoryLimit::Share(0.5)));
    }

    #[test]
    fn bad_sizes_say_what_to_write() {
        for bad in ["", "GiB", "8XB", "-1G", "0", "0.1", "1e30T", "1.2.3G"] {
            let err = parse(bad).expect_err(bad);
            assert!(err.contains("e.g. `8GiB`"), "{bad}: {err}");
        }
        for bad in ["0%", "150%"] {
            assert!(
                parse(bad).is_err_and(|e| e.contains("at most 100%")),
                "{bad}"
            );
        }
    }

    #[test]
    fn case_files_take_strings_or_byte_counts() {
        #[derive(Deserialize)]
        struct T {
            limit: MemoryLimit,
        }
        let t: T = toml::from_str("limit = \"2GiB\"").expect("string");
        assert_eq!(t.limit, MemoryLimit::Bytes(2 << 30));
        let t: T = toml::from_str("limit = 1024").expect("integer");
        assert_eq!(t.limit, MemoryLimit::Bytes(1024));
        let e = toml::from_str::<T>("limit = \"lots\"")
            .err()
            .map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("`lots` is not a memory size") && e.contains("line 1")),
            "{e:?}"
        );
    }

    #[test]
    fn shares_scale_with_the_machine() {
        assert_eq!(MemoryLimit::Share(0.25).bytes(1 << 30), 1 << 28);
        assert_eq!(MemoryLimit::Bytes(7).bytes(1 << 30), 7);
        let m = MachineMemory {
            bytes: 24 << 30,
            source: "test",
        };
        assert_eq!(m.default_limit(), 12 << 30);
    }

    #[test]
    fn machine_files_are_read() {
        let meminfo = "MemTotal:       24683568 kB\nMemFree:        15834852 kB\n";
        assert_eq!(meminfo_total(meminfo), Some(24_683_568 * 1024));
        assert_eq!(meminfo_total("MemFree: 1 kB\n"), None);
        assert_eq!(cgroup_limit("max\n"), None);
        assert_eq!(cgroup_limit("9223372036854771712\n"), None);
        assert_eq!(cgroup_limit("4294967296\n"), Some(4 << 30));
        let here = MachineMemory::detect();
        assert!(here.bytes > 0 && !here.source.is_empty());
    }

    #[test]
    fn sizes_print_in_binary_units() {
        assert_eq!(human_bytes(100), "100 B");
        assert_eq!(human_bytes(80_000_000_000), "74.5 GiB");
        assert_eq!(MemoryLimit::Bytes(3 << 29).to_string(), "1536MiB");
        assert_eq!(MemoryLimit::Bytes(8 << 30).to_string(), "8GiB");
        assert_eq!(MemoryLimit::Bytes(4097).to_string(), "4097");
        assert_eq!(MemoryLimit::Share(0.5).to_string(), "50%");
    }
}
