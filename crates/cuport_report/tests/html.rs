//! report.html: structure, escaping and size in Rust, then the page itself
//! in headless Chromium (dashboard rendered, a filter set through the URL
//! hash hides the expected hunks, no script errors).
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cuport_model::Target;
use cuport_report::{render, report_html, Format, ReportDocument};

const DATA_OPEN: &str = "<script type=\"application/json\" id=\"report-data\">";
const INJECTED: &str = "<script>document.body.dataset.pwned='1'</script><!--";

fn embedded(html: &str) -> &str {
    let start = html.find(DATA_OPEN).unwrap() + DATA_OPEN.len();
    let len = html[start..].find("</script>").unwrap();
    &html[start..start + len]
}

/// A document whose migrated code, paths and messages try to break out of
/// the page.
fn hostile_document() -> ReportDocument {
    let mut document = common::fixture_document("cublas_gemm", Target::Ascend);
    let file = &mut document.files[0];
    let diff = file.diff.take().unwrap();
    let at = diff.find("\n@@").unwrap();
    let (head, tail) = diff.split_at(at + 1);
    let first_hunk_end = tail.find('\n').unwrap() + 1;
    file.diff = Some(format!(
        "{head}{}+// {INJECTED}\n{}",
        &tail[..first_hunk_end],
        &tail[first_hunk_end..]
    ));
    file.diagnostics[0].message = format!("message {INJECTED}");
    file.diagnostics[0].cuda_name = format!("name{INJECTED}");
    document.root = format!("root{INJECTED}");
    document
}

/// The page's data: the files worth showing, with every message findable.
fn check_data(html: &str, document: &ReportDocument) {
    let data: serde_json::Value = serde_json::from_str(embedded(html)).unwrap();
    let paths: Vec<&str> = data["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    let expected: Vec<&str> = document
        .files
        .iter()
        .filter(|f| f.diff.is_some() || !f.diagnostics.is_empty())
        .map(|f| f.path.as_str())
        .collect();
    assert_eq!(paths, expected);
    let strings: Vec<&str> = data["strings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    for d in document.files.iter().flat_map(|f| &f.diagnostics) {
        assert!(strings.contains(&d.message.as_str()), "{}", d.message);
    }
    let diffs: Vec<&str> = data["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|f| f["diff"].as_str())
        .collect();
    let expected: Vec<&str> = document
        .files
        .iter()
        .filter_map(|f| f.diff.as_deref())
        .collect();
    assert_eq!(diffs, expected);
}

#[test]
fn embedded_json_parses_and_carries_the_files() {
    let document = common::fixture_document("nccl_allreduce", Target::Hip);
    let html = report_html(&document).unwrap();
    check_data(&html, &document);
    let rendered = render(&document, Format::Html).unwrap();
    assert_eq!(rendered[0].file_name, "report.html");
    assert_eq!(rendered[0].text, html);
}

#[test]
fn migrated_text_cannot_open_elements() {
    let document = hostile_document();
    let html = report_html(&document).unwrap();
    assert!(!html.contains(INJECTED), "raw injected markup in the page");
    assert!(!html.contains("<script>document"));
    // Exactly the page's own two scripts end.
    assert_eq!(html.matches("</script>").count(), 2);
    assert!(html.contains("&lt;script&gt;document.body.dataset.pwned="));
    check_data(&html, &document);
}

#[test]
fn page_is_self_contained() {
    let html = report_html(&common::fixture_document("pytorch_train", Target::Ascend)).unwrap();
    for external in ["src=\"http", "href=\"http", "@import", "url(http", "<link"] {
        assert!(!html.contains(external), "{external}");
    }
}

#[test]
fn dashboard_structure() {
    let document = common::fixture_document("cublas_gemm", Target::Ascend);
    let html = report_html(&document).unwrap();
    let start = html.find("<section id=\"dashboard\">").unwrap();
    let end = start + html[start..].find("</section>").unwrap();
    let dashboard = html[start..end].replace("><", ">\n<");
    common::settings().bind(|| insta::assert_snapshot!("dashboard_cublas_gemm_ascend", dashboard));
    let bars = dashboard.matches("<g class=\"bar\">").count();
    assert_eq!(bars, document.totals.by_library.len());
}

/// 5,000 files cycling through every fixture's files (each fixture ported
/// to Ascend), under distinct paths.
fn large_document(fixtures: &[String]) -> ReportDocument {
    let sources: Vec<_> = fixtures
        .iter()
        .flat_map(|name| common::fixture_document(name, Target::Ascend).files)
        .collect();
    let mut document = common::fixture_document(&fixtures[0], Target::Ascend);
    document.files = (0..5000)
        .map(|i| {
            let mut file = sources[i % sources.len()].clone();
            file.path = format!("src/module_{}/file_{i}_{}", i / 100, file.path);
            file
        })
        .collect();
    document
}

#[test]
fn five_thousand_files_stay_under_fifty_megabytes() {
    let document = large_document(&common::fixture_names());
    let html = report_html(&document).unwrap();
    let megabytes = html.len() as f64 / 1e6;
    assert!(megabytes < 50.0, "{megabytes:.1} MB");
    // Smaller than report.json, which carries the same files in full.
    let json = document.to_json().unwrap();
    assert!(
        html.len() < json.len() / 2,
        "{} vs {}",
        html.len(),
        json.len()
    );
}

// ---- real browser ----

fn chromium() -> Option<PathBuf> {
    let path = Path::new("/usr/bin/chromium");
    if path.exists() {
        return Some(path.to_path_buf());
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI is set but /usr/bin/chromium is missing: install Debian's `chromium` package"
    );
    None
}

/// Runs Chromium headless and returns its standard output; kills it after
/// a minute so a hung browser fails the test instead of stalling CI.
fn run_chromium(chromium: &Path, profile: &Path, extra: &[&str], url: &str) -> String {
    let stdout_path = profile.join("stdout.txt");
    let mut child = Command::new(chromium)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1400,1000",
            "--virtual-time-budget=3000",
        ])
        .arg(format!(
            "--user-data-dir={}",
            profile.join("profile").display()
        ))
        .args(extra)
        .arg(url)
        .stdout(std::fs::File::create(&stdout_path).unwrap())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().unwrap();
            panic!("chromium did not finish within 60 s: {url}");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    assert!(status.success(), "chromium failed ({status}) on {url}");
    std::fs::read_to_string(&stdout_path).unwrap()
}

/// Hunks in the dumped DOM: (hidden, text of the hunk element's opening).
fn hunks(dom: &str) -> Vec<(bool, &str)> {
    dom.split("<div class=\"hunk")
        .skip(1)
        .map(|rest| {
            (
                rest.starts_with(" hidden"),
                rest.split("<pre").next().unwrap(),
            )
        })
        .collect()
}

fn page_errors(dom: &str) -> &str {
    let start = dom.find("id=\"page-errors\"").unwrap();
    let end = start + dom[start..].find("</div>").unwrap();
    &dom[start..end]
}

#[test]
// A skipped browser test must say so loudly.
#[allow(clippy::print_stderr)]
fn page_renders_and_filters_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        eprintln!("SKIPPED: /usr/bin/chromium is not installed; `apt-get install -y chromium` to run the browser test");
        return;
    };
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    std::fs::create_dir_all(&out).unwrap();
    let page = out.join("report.html");
    std::fs::write(&page, report_html(&hostile_document()).unwrap()).unwrap();
    let url = format!("file://{}", page.display());
    let profile = tempfile::tempdir().unwrap();
    let screenshot = out.join("screenshot.png");
    let arg = format!("--screenshot={}", screenshot.display());
    run_chromium(&chromium, profile.path(), &[&arg], &url);
    assert!(std::fs::metadata(&screenshot).unwrap().len() > 10_000);

    let dom = run_chromium(&chromium, profile.path(), &["--dump-dom"], &url);
    assert!(
        dom.contains("data-ready=\"true\""),
        "the script did not finish"
    );
    assert_eq!(page_errors(&dom), "id=\"page-errors\" hidden=\"\">");
    assert!(dom.contains("id=\"library-chart\""));
    assert!(!dom.contains("data-pwned"), "injected script ran");
    assert!(dom.contains("&lt;script&gt;document.body.dataset.pwned"));
    let all = hunks(&dom);
    assert!(all.len() > 3 && all.iter().all(|(hidden, _)| !hidden));

    let filtered = format!("{url}#level=approximate");
    let dom = run_chromium(&chromium, profile.path(), &["--dump-dom"], &filtered);
    assert_eq!(page_errors(&dom), "id=\"page-errors\" hidden=\"\">");
    let after = hunks(&dom);
    assert_eq!(after.len(), all.len());
    let badge = "badge b-approximate";
    let shown: Vec<_> = after.iter().filter(|(hidden, _)| !hidden).collect();
    assert!(!shown.is_empty() && shown.len() < after.len());
    for (hidden, label) in &after {
        assert_eq!(!hidden, label.contains(badge), "{label}");
    }

    // Two filters at once: a rule code and the free-text search.
    let filtered = format!("{url}#code=CP0001&q=cuda_fp16");
    let dom = run_chromium(&chromium, profile.path(), &["--dump-dom"], &filtered);
    let after = hunks(&dom);
    let shown: Vec<_> = after.iter().filter(|(hidden, _)| !hidden).collect();
    assert_eq!(shown.len(), 1, "{shown:?}");
    assert!(shown[0].1.contains("<span class=\"code\">CP0001</span>"));
    assert!(dom.contains("1 of 1 files"));
}
