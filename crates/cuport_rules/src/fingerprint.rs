//! The fingerprint of a set of rule files that reports carry: FNV-1a, 64
//! bits, over each file's name, priority and text in (name, priority)
//! order. Stable across Rust releases, unlike `DefaultHasher`. The build
//! script includes this module too and stores the built-in files'
//! fingerprint, so a run over the built-in tables alone does not hash 6 MB
//! of text again.

/// One rule file as the fingerprint reads it: name, priority, text.
pub(crate) type Part<'a> = (&'a str, i32, &'a str);

/// The fingerprint of `parts`, which must be sorted by name, then priority.
pub(crate) fn of_sorted<'a>(parts: impl IntoIterator<Item = Part<'a>>) -> u64 {
    let mut hash = Fnv1a::default();
    for (name, priority, text) in parts {
        hash.write(name.as_bytes());
        hash.write(&[0]);
        hash.write(&priority.to_le_bytes());
        hash.write(text.as_bytes());
        hash.write(&[0]);
    }
    hash.0
}

struct Fnv1a(u64);

impl Default for Fnv1a {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl Fnv1a {
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0100_0000_01b3);
        }
    }
}
