//! The `[[counterpart]]` facts of the target profiles against the real
//! headers where `../shared/vendor` has them (ops-blas); the others must say
//! that no header checks them.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]
mod vendor;

use cuport_model::Target;

#[test]
fn counterparts_with_a_vendored_header_declare_their_prefix() {
    let Some(root) = vendor::cann_vendor("ops-blas/include", "library counterparts") else {
        return;
    };
    let mut checked = 0;
    for target in Target::ALL {
        for counterpart in &target.profile().counterparts {
            let header = root.join("ops-blas/include").join(&counterpart.header);
            if !header.is_file() {
                assert!(
                    counterpart
                        .source
                        .contains("not checked against a header in CI"),
                    "{target}: {} ({}) has no vendored header; its source must say it is unchecked",
                    counterpart.name,
                    counterpart.header
                );
                continue;
            }
            let text = std::fs::read_to_string(&header).unwrap();
            let prefix = counterpart.prefix.as_deref().expect("a C API has a prefix");
            let declared = format!(" {prefix}Create(");
            assert!(
                text.contains(&declared),
                "{} does not declare {declared}",
                header.display()
            );
            checked += 1;
        }
    }
    assert!(checked >= 2, "ops-blas and its Lt part are checked");
}
