//! Recognition fixtures (`tests/kernel_patterns/*.cu`): every kernel is
//! preceded by an `// expect: <pattern>` comment (`none` for a kernel that
//! must stay unclassified), and recognition must find exactly that; the
//! negative fixtures are kernels that resemble a pattern but compute
//! something else. The snapshot records the slots each pattern bound.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fmt::Write as _;
use std::path::Path;

use cuport_analyze::{recognise_kernels, KernelPattern};

fn fixtures() -> Vec<(String, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/kernel_patterns");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixture directory")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "cu"))
        .collect();
    files.sort();
    assert!(files.len() >= 3, "fixtures missing in {}", dir.display());
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read_to_string(&p).expect("readable fixture"))
        })
        .collect()
}

/// The `expect:` comment closest above `line` (1-based).
fn expected(text: &str, line: u32) -> Option<String> {
    text.lines()
        .take(line as usize - 1)
        .filter_map(|l| l.trim().strip_prefix("// expect:"))
        .last()
        .map(|e| e.trim().to_string())
}

fn found(kernel: &KernelPattern) -> String {
    kernel
        .recognised
        .as_ref()
        .map_or_else(|| "none".to_string(), |r| r.pattern.clone())
}

#[test]
fn every_fixture_kernel_is_recognised_as_its_comment_says() {
    let mut wrong = Vec::new();
    let mut count = 0;
    for (name, text) in fixtures() {
        for kernel in recognise_kernels(&text).expect("parses") {
            count += 1;
            let want = expected(&text, kernel.line).expect("an expect: comment");
            let got = found(&kernel);
            if want != got {
                wrong.push(format!(
                    "{name}:{} {}: expected {want}, found {got} ({:?})",
                    kernel.line, kernel.name, kernel.unclassified
                ));
            }
        }
    }
    assert!(count >= 45, "only {count} fixture kernels");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn recognised_slots_and_certainty() {
    let mut out = String::new();
    for (name, text) in fixtures() {
        for kernel in recognise_kernels(&text).expect("parses") {
            let Some(r) = &kernel.recognised else {
                continue;
            };
            let slots: Vec<String> = r.slots.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let shapes: Vec<String> = r
                .tensors
                .iter()
                .map(|t| format!("{}[{}]", t.param, t.shape.as_deref().unwrap_or("?")))
                .collect();
            let _ = writeln!(
                out,
                "{name}:{} {} -> {} ({:?}) {} | {}",
                kernel.line,
                kernel.name,
                r.pattern,
                r.certainty,
                slots.join(" "),
                shapes.join(" ")
            );
        }
    }
    insta::assert_snapshot!(out);
}
