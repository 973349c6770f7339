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

/// Names a directory written by `cuport migrate ... --report DIR` whose
/// report.html the tests drive instead (checked against its report.json).
const REPORT_DIR_VAR: &str = "CUPORT_REPORT_DIR";

/// Opens the page under test; `None` when the browser is absent. It is
/// `$CUPORT_REPORT_DIR/report.html` when that is set, else `fixtures/`
/// migrated here, written under the test's target directory (kept as an
/// artifact, next to the screenshots).
fn open_report(test: &str) -> Option<(Page, Vec<ModelFile>, PathBuf)> {
    let chromium = browser::chromium(test)?;
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&out).unwrap();
    let (document, page_path) = match std::env::var_os(REPORT_DIR_VAR) {
        Some(dir) => {
            let dir = std::path::absolute(dir).unwrap();
            let document = ReportDocument::read(&dir.join("report.json"))
                .unwrap_or_else(|e| panic!("{REPORT_DIR_VAR}: {e}"));
            (document, dir.join("report.html"))
        }
        None => {
            let document = fixtures_document();
            let page_path = out.join(format!("{test}.html"));
            std::fs::write(&page_path, report_html(&document).unwrap()).unwrap();
            (document, page_path)
        }
    };
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

/// Presses `key` and returns the hunk marked current afterwards, checking
/// that exactly one is and that it has been brought into view.
fn step(page: &Page, key: &str) -> browser::Current {
    page.press(key);
    let current = page.current();
    assert_eq!(current.marked, 1, "after {key}: {current:?}");
    current.assert_in_view();
    current
}

#[test]
fn j_and_k_walk_every_hunk_in_order_and_bring_each_into_view() {
    let Some((page, files, _)) = open_report("keys-walk") else {
        return;
    };
    let order = model::visible(&files, &Filter::default());
    let unrendered: usize =
        page.json("document.querySelectorAll('section.file .body:empty').length");
    assert!(
        unrendered > 0,
        "the last files should wait to be scrolled to"
    );
    let first = step(&page, "j");
    assert_eq!(first.hunk, order[0]);
    // Forward through every hunk, the lazily rendered last files included.
    for (i, expected) in order.iter().enumerate().skip(1) {
        let current = step(&page, "j");
        assert_eq!(&current.hunk, expected, "j to hunk {i}");
        assert_eq!(current.index, i as i64);
    }
    let last = step(&page, "j");
    assert_eq!(
        &last.hunk,
        order.last().unwrap(),
        "j stops at the last hunk"
    );
    assert!(last.scroll > first.scroll + 1000.0, "{first:?} {last:?}");
    // Back over the last files (each key press costs two protocol round
    // trips of ~0.1 s; the top of the page is walked by the next test).
    let back = order.len() - files.last().unwrap().hunks.len() - 3;
    for (i, expected) in order
        .iter()
        .enumerate()
        .rev()
        .skip(1)
        .take_while(|(i, _)| *i >= back)
    {
        assert_eq!(&step(&page, "k").hunk, expected, "k to hunk {i}");
    }
    assert_eq!(page.state().errors, "", "script errors");
}

#[test]
fn keyboard_navigation_minds_the_search_box_folds_filters_and_chords() {
    let Some((page, files, out)) = open_report("keys") else {
        return;
    };
    let order = model::visible(&files, &Filter::default());
    for (i, expected) in order.iter().enumerate().take(4) {
        assert_eq!(&step(&page, "j").hunk, expected, "j to hunk {i}");
    }
    for (i, expected) in order.iter().enumerate().take(3).rev() {
        assert_eq!(&step(&page, "k").hunk, expected, "k to hunk {i}");
    }
    assert_eq!(step(&page, "k").hunk, order[0], "k stops at the first hunk");
    keys_in_the_search_box_do_not_navigate(&page, &order);
    collapsed_files_are_skipped(&page, &files, &order);
    filtered_navigation_continues_from_the_current_hunk(&page, &files, &order);
    assert_eq!(page.state().errors, "", "script errors");
    page.screenshot(&out.join("keys.png"));
}

/// j/k typed into the search box are text; Escape leaves the box and the
/// keys navigate again; `/` goes back to the box without typing a slash.
fn keys_in_the_search_box_do_not_navigate(page: &Page, order: &[(String, String)]) {
    let before = page.current();
    page.click("#search");
    for (typed, key) in [("j", "j"), ("jk", "k"), ("jkj", "j")] {
        page.press(key);
        let now = page.current();
        assert_eq!(now.active, "search");
        assert_eq!(
            (now.marked, &now.hunk),
            (1, &before.hunk),
            "{key} in the search box"
        );
        assert_eq!(page.state().hash, format!("#q={typed}"));
    }
    for _ in 0.."jkj".len() {
        page.press("Backspace");
    }
    page.press("Escape");
    assert_eq!(page.current().active, "BODY");
    assert_eq!(step(page, "j").hunk, order[1], "j after Escape");
    page.press("/");
    let now = page.current();
    assert_eq!(now.active, "search");
    assert_eq!(page.state().hash, "", "/ typed nothing");
    // Typed into the box, `k` filters: the current hunk may be hidden by it
    // (when its file's path has no `k`), so only its identity is checked.
    page.press("k");
    let typed = page.current();
    assert_eq!(typed.active, "search");
    assert_eq!(
        (typed.marked, &typed.hunk),
        (1, &order[1]),
        "k typed into the box"
    );
    page.press("Backspace");
    page.press("Escape");
    assert_eq!(step(page, "k").hunk, order[0]);
    // Chords belong to the browser (Ctrl+P prints), not to the page.
    page.press_with_ctrl("j");
    assert_eq!(page.current().hunk, order[0], "Ctrl+j moved the hunk");
}

/// A file folded by a click on its header has no hunk to land on.
fn collapsed_files_are_skipped(page: &Page, files: &[ModelFile], order: &[(String, String)]) {
    assert_eq!(page.current().hunk, order[0]);
    let folded = &files[1].path;
    page.click("section.file:nth-child(2) > .head");
    let unfolded: Vec<_> = order.iter().filter(|(path, _)| path != folded).collect();
    // From the first file over the folded one into the third, and back.
    let span = &unfolded[..files[0].hunks.len() + 2];
    for (i, hunk) in span.iter().enumerate().skip(1) {
        assert_eq!(
            &&step(page, "j").hunk,
            hunk,
            "j to hunk {i} with {folded} folded"
        );
    }
    for hunk in span.iter().rev().skip(1) {
        assert_eq!(&&step(page, "k").hunk, hunk, "k with {folded} folded");
    }
    page.click("section.file:nth-child(2) > .head");
}

/// When a filter hides the current hunk, j goes on to the next hunk the
/// filter shows after it, not back to the top.
fn filtered_navigation_continues_from_the_current_hunk(
    page: &Page,
    files: &[ModelFile],
    order: &[(String, String)],
) {
    let (status, shown, at) = hidden_spot(files, order);
    while page.current().hunk != order[at] {
        step(page, "j");
    }
    page.choose("f-level", status);
    page.press("Escape");
    let next = order[at..].iter().find(|h| shown.contains(h)).unwrap();
    assert_eq!(&step(page, "j").hunk, next, "j from a hunk the filter hid");
    let position = shown.iter().position(|h| h == next).unwrap();
    for expected in &shown[position + 1..] {
        assert_eq!(&step(page, "j").hunk, expected, "j among {status} hunks");
    }
    for expected in shown.iter().rev().skip(1) {
        assert_eq!(&step(page, "k").hunk, expected, "k among {status} hunks");
    }
}

/// The status with the fewest hunks (to keep the walk short) that has a
/// hunk without it between two with it; returns the status, its hunks and
/// the index in `order` of the hunk between.
fn hidden_spot<'a>(
    files: &'a [ModelFile],
    order: &[(String, String)],
) -> (&'a str, Vec<(String, String)>, usize) {
    let statuses: std::collections::BTreeSet<&str> = files
        .iter()
        .flat_map(|f| &f.hunks)
        .flat_map(|h| h.statuses.iter().copied())
        .collect();
    let spots = statuses.into_iter().filter_map(|status| {
        let filter = Filter {
            status: Some(status.to_owned()),
            ..Filter::default()
        };
        let shown = model::visible(files, &filter);
        let first = order.iter().position(|h| Some(h) == shown.first())?;
        let at = (first + 1..order.len()).find(|&i| {
            !shown.contains(&order[i]) && order[i..].iter().any(|h| shown.contains(h))
        })?;
        Some((status, shown, at))
    });
    spots
        .min_by_key(|(_, shown, at)| shown.len() + at)
        .expect("a status whose hunks have others between them")
}

/// The PyTorch API support analysis of `fixtures/pytorch_train` against the
/// newest torch_npu list on A2, as `cuport migrate --report` makes it.
fn support_report() -> cuport_report::ApiSupportReport {
    use cuport_rules::api_support::SupportLists;
    let lists = SupportLists::builtin(Target::Ascend).unwrap();
    let path = common::fixtures_root().join("pytorch_train/train.py");
    let source = std::fs::read(&path).unwrap();
    let is_api = |api: &str| lists.lists(api);
    let packages: Vec<String> = lists
        .guidance
        .packages
        .iter()
        .map(|p| p.module.clone())
        .collect();
    let keywords = lists.guidance.advice_keywords();
    let query = cuport_analyze::ApiQuery {
        is_api: &is_api,
        packages: &packages,
        keywords: &keywords,
    };
    let inventory = cuport_analyze::torch_api_uses(&source, &query).unwrap();
    let files = vec![("train.py".to_owned(), inventory)];
    let no_kernels = |_: &str| Vec::new();
    let sources = cuport_report::CudaSources {
        paths: &[],
        kernels: &no_kernels,
        no_skeleton_note: None,
        library_uses: &[],
    };
    let version = lists.version(None).unwrap();
    cuport_report::api_support_report(&files, &lists, (version, "A2"), &|_| None, &sources)
}

/// The API support section of report.html: choosing a status or a file in
/// its own filters leaves exactly the rows with that status or file.
#[test]
fn api_support_filters_leave_the_rows_of_the_chosen_status_and_file() {
    let Some(chromium) = browser::chromium("api_support_filters") else {
        return;
    };
    let report = support_report();
    let section = cuport_report::api_support_section(&report);
    let out = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-browser");
    std::fs::create_dir_all(&out).unwrap();
    let page_path = out.join("api_support_filters.html");
    let html = cuport_report::report_html_with(&fixtures_document(), &[section]).unwrap();
    std::fs::write(&page_path, html).unwrap();
    let page = Page::open(chromium, &format!("file://{}", page_path.display()));
    let visible = |page: &Page| -> Vec<String> {
        page.json(
            "[...document.querySelectorAll('#api-support tbody tr')]\
             .filter(r => !r.classList.contains('hidden'))\
             .map(r => r.dataset.status + ' ' + r.dataset.file)",
        )
    };
    let total = report.records.len()
        + report.third_party.len()
        + report.custom_ops.len()
        + report.advice.len();
    assert_eq!(visible(&page).len(), total);
    let restricted = report
        .records
        .iter()
        .filter(|r| r.status.id() == "restricted")
        .count();
    assert!(restricted > 0 && restricted < total);
    page.choose("as-status", "restricted");
    let rows = visible(&page);
    assert_eq!(rows.len(), restricted);
    assert!(rows.iter().all(|r| r == "restricted train.py"), "{rows:?}");
    let count: String = page.json("document.getElementById('as-count').textContent");
    assert_eq!(count, format!("{restricted} of {total} rows"));
    page.choose("as-status", "partial");
    assert_eq!(visible(&page).len(), report.third_party.len());
    page.choose("as-status", "");
    page.choose("as-file", "train.py");
    assert_eq!(visible(&page).len(), total);
    let errors: String = page.json("document.getElementById('page-errors').textContent");
    assert_eq!(errors, "", "script errors");
}
