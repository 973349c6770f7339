//! report.html in headless Chromium, driven over the DevTools protocol with
//! real mouse clicks and key presses: the filter controls leave exactly the
//! hunks and files the report document says they should, `j`/`k` walk the
//! hunks in order and bring each into view, and keys typed into the search
//! box stay there. The report is a real migration of every fixture to
//! Ascend (several files, every status).
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod browser;
mod common;

use std::path::PathBuf;

use browser::model::{self, Filter, ModelFile};
use browser::Page;
use cuport_model::Target;
use cuport_report::{report_html, ReportDocument};
use cuport_rewrite::MigrateOptions;

/// `fixtures/` as a whole, migrated to Ascend.
fn fixtures_document() -> ReportDocument {
    let options = MigrateOptions::new(Target::Ascend);
    let migration = common::migrate(&common::fixtures_root(), &options);
    let mut document = ReportDocument::new(&migration, common::meta(Target::Ascend));
    document.root = "fixtures".to_owned();
    document
}

/// Writes the page under the test's target directory (kept as an artifact,
/// next to the screenshots) and opens it; `None` when the browser is absent.
fn open_report(test: &str) -> Option<(Page, Vec<ModelFile>, PathBuf)> {
    let chromium = browser::chromium(test)?;
    let document = fixtures_document();
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&out).unwrap();
    let page_path = out.join(format!("{test}.html"));
    std::fs::write(&page_path, report_html(&document).unwrap()).unwrap();
    let page = Page::open(chromium, &format!("file://{}", page_path.display()));
    Some((page, model::model(&document), out))
}

/// The page shows exactly what `filter` should leave, and says so in the
/// count and the URL hash.
fn assert_shows(page: &Page, files: &[ModelFile], filter: &Filter, hash: &str) {
    page.wait_rendered();
    let state = page.state();
    let expected_files = model::visible_files(files, filter);
    assert_eq!(state.files, expected_files, "files for {hash}");
    assert_eq!(
        state.hunks,
        model::visible(files, filter),
        "hunks for {hash}"
    );
    assert_eq!(
        state.count,
        format!("{} of {} files", expected_files.len(), files.len())
    );
    assert_eq!(state.hash, hash);
    assert_eq!(state.errors, "", "script errors");
}

/// A value of some file-level or hunk-level property that keeps some
/// files and hides others, so a filter on it has something to show.
fn splitting<'a>(
    files: &[ModelFile],
    candidates: impl Iterator<Item = &'a str>,
    filter: impl Fn(&str) -> Filter,
) -> String {
    let all = model::visible_files(files, &Filter::default()).len();
    let mut candidates: Vec<&str> = candidates.collect();
    candidates.sort();
    candidates.dedup();
    candidates
        .into_iter()
        .find(|value| {
            let shown = model::visible_files(files, &filter(value)).len();
            shown > 1 && shown < all
        })
        .expect("the fixtures have a value that splits the files")
        .to_owned()
}

#[test]
fn filter_controls_hide_exactly_the_expected_hunks() {
    let Some((page, files, out)) = open_report("filters") else {
        return;
    };
    // All fixture files are listed, and they need the lazy rendering.
    assert!(files.len() > 20, "{} files", files.len());
    let none = Filter::default();
    let state = page.state();
    assert_eq!(state.files, model::visible_files(&files, &none));

    let status = Filter {
        status: Some("unsupported".to_owned()),
        ..none.clone()
    };
    page.choose("f-level", "unsupported");
    assert_shows(&page, &files, &status, "#level=unsupported");
    page.screenshot(&out.join("filter-unsupported.png"));

    // A library on top of the status: both must hold.
    let library = splitting(
        &files,
        files
            .iter()
            .flat_map(|f| f.libraries.iter().map(String::as_str)),
        |l| Filter {
            library: Some(l.to_owned()),
            ..status.clone()
        },
    );
    let both = Filter {
        library: Some(library.clone()),
        ..status.clone()
    };
    page.choose("f-library", &library);
    assert_shows(
        &page,
        &files,
        &both,
        &format!("#level=unsupported&library={library}"),
    );
    page.choose("f-level", "");
    let only_library = Filter {
        library: Some(library.clone()),
        ..none.clone()
    };
    assert_shows(&page, &files, &only_library, &format!("#library={library}"));
    page.choose("f-library", "");
    assert_shows(&page, &files, &none, "");

    let code = splitting(
        &files,
        files
            .iter()
            .flat_map(|f| &f.hunks)
            .flat_map(|h| h.codes.iter().map(String::as_str)),
        |c| Filter {
            code: Some(c.to_owned()),
            ..none.clone()
        },
    );
    page.choose("f-code", &code);
    let by_code = Filter {
        code: Some(code.clone()),
        ..none.clone()
    };
    assert_shows(&page, &files, &by_code, &format!("#code={code}"));
    page.choose("f-code", "");
    assert_shows(&page, &files, &none, "");

    // The file box, typed key by key, in capitals: it ignores case.
    let directory = files[0].path.split('/').next().unwrap().to_uppercase();
    page.click("#f-file");
    page.type_text(&directory);
    let by_path = Filter {
        path_contains: Some(directory.clone()),
        ..none.clone()
    };
    assert_shows(&page, &files, &by_path, &format!("#file={directory}"));
    for _ in 0..directory.len() {
        page.press("Backspace");
    }
    assert_shows(&page, &files, &none, "");
}
