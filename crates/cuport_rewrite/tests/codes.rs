//! cuport's own codes are documented from the registry: the table in
//! mappings/README.md is generated from `cuport_rewrite::CODES`.
//! Regenerate with `CUPORT_BLESS=1 cargo test -p cuport_rewrite --test codes`.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::collections::BTreeSet;
use std::path::PathBuf;

use cuport_rewrite::CODES;

const START: &str = "<!-- cuport-codes:start -->\n";
const END: &str = "<!-- cuport-codes:end -->";

fn table() -> String {
    let mut out = String::from("| code | labels | meaning |\n|---|---|---|\n");
    for code in CODES {
        let labels = if code.diagnostic {
            "diagnostic"
        } else {
            "edit"
        };
        out.push_str(&format!(
            "| {} | {labels} | {} |\n",
            code.code, code.summary
        ));
    }
    out
}

#[test]
fn readme_lists_every_code_of_the_registry() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../mappings/README.md");
    let text = std::fs::read_to_string(&path).expect("mappings/README.md");
    let start = text.find(START).expect("start marker") + START.len();
    let end = text.find(END).expect("end marker");
    let expected = table();
    if std::env::var_os("CUPORT_BLESS").is_some() {
        let updated = format!("{}{expected}{}", &text[..start], &text[end..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert_eq!(
        &text[start..end],
        expected,
        "mappings/README.md's code table is stale; run CUPORT_BLESS=1 cargo test -p cuport_rewrite --test codes"
    );
}

#[test]
fn codes_are_unique_and_well_formed() {
    let mut seen = BTreeSet::new();
    for code in CODES {
        assert!(seen.insert(code.code), "{} listed twice", code.code);
        let text = code.code.to_string();
        assert_eq!(cuport_model::Code::parse(&text), Some(code.code), "{text}");
        assert!(!code.summary.is_empty());
    }
}
