//! Renderers of a [`crate::report::RunReport`]: Markdown (CI step summary),
//! JUnit XML (one test case per case × check) and a standalone HTML report.
pub mod html;
pub mod junit;
pub mod markdown;

/// First line of a message, for table cells.
pub(crate) fn first_line(message: &str) -> &str {
    message.lines().next().unwrap_or("")
}

/// Seconds in a readable unit.
pub fn seconds(s: f64) -> String {
    match s {
        s if s >= 1.0 => format!("{s:.3} s"),
        s if s >= 1e-3 => format!("{:.3} ms", s * 1e3),
        s if s >= 1e-6 => format!("{:.3} µs", s * 1e6),
        s => format!("{:.1} ns", s * 1e9),
    }
}
