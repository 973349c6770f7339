//! A thin driver for report.html in headless Chromium over the DevTools
//! protocol: clicks and key presses are real input events
//! (`Input.dispatchMouseEvent` / `Input.dispatchKeyEvent`), so the page sees
//! what a reviewer's mouse and keyboard would send.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub(crate) mod model;

use headless_chrome::browser::tab::ModifierKey;
use headless_chrome::{Browser, LaunchOptions, Tab};
use serde::de::DeserializeOwned;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Debian's Chromium, or `None` (after saying so on stderr) outside CI;
/// under CI a missing browser fails the test instead of skipping it.
// A skipped browser test must say so loudly.
#[allow(clippy::print_stderr)]
pub(crate) fn chromium(test: &str) -> Option<PathBuf> {
    let path = Path::new(CHROMIUM);
    if path.exists() {
        return Some(path.to_path_buf());
    }
    let ci = std::env::var("CI").unwrap_or_default();
    assert!(
        ci.is_empty() || ci == "false" || ci == "0",
        "CI={ci} but {CHROMIUM} is missing: install Debian's `chromium` package (.ci/run does)"
    );
    eprintln!(
        "SKIPPED {test}: {CHROMIUM} is not installed; `apt-get install -y chromium` to run the browser test"
    );
    None
}

/// One headless browser with one tab showing a page.
pub(crate) struct Page {
    // Kept alive for the tab; dropping it ends the Chromium process.
    _browser: Browser,
    _profile: tempfile::TempDir,
    pub(crate) tab: Arc<Tab>,
}

impl Page {
    /// Starts Chromium with the options the issue asks for and opens `url`,
    /// waiting until the page's script has finished.
    pub(crate) fn open(chromium: PathBuf, url: &str) -> Page {
        let profile = tempfile::tempdir().unwrap();
        let args: Vec<&OsStr> = [
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ]
        .iter()
        .map(OsStr::new)
        .collect();
        let options = LaunchOptions::default_builder()
            .path(Some(chromium))
            .headless(true)
            .sandbox(false)
            .window_size(Some((1400, 1000)))
            .user_data_dir(Some(profile.path().to_path_buf()))
            .idle_browser_timeout(Duration::from_secs(120))
            .args(args)
            .build()
            .unwrap();
        let browser = Browser::new(options).unwrap();
        let tab = browser.new_tab().unwrap();
        tab.set_default_timeout(Duration::from_secs(20));
        let page = Page {
            _browser: browser,
            _profile: profile,
            tab,
        };
        page.goto(url);
        page
    }

    pub(crate) fn goto(&self, url: &str) {
        self.tab.navigate_to(url).unwrap();
        self.wait_ready();
    }

    fn wait_ready(&self) {
        self.tab.wait_until_navigated().unwrap();
        self.wait_for("document.body && document.body.dataset.ready === 'true'");
    }

    /// Evaluates `expression` (which must produce a JSON string) and parses it.
    pub(crate) fn json<T: DeserializeOwned>(&self, expression: &str) -> T {
        let value = self
            .tab
            .evaluate(&format!("JSON.stringify({expression})"), false)
            .unwrap()
            .value;
        let text = value
            .as_ref()
            .and_then(|v| v.as_str())
            .unwrap_or_else(|| panic!("{expression} gave {value:?}"));
        serde_json::from_str(text)
            .unwrap_or_else(|error| panic!("{expression} gave {text}: {error}"))
    }

    /// Waits until `condition` (a JavaScript expression) is true.
    pub(crate) fn wait_for(&self, condition: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !self.json::<bool>(&format!("!!({condition})")) {
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {condition}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A real mouse click in the middle of the element.
    pub(crate) fn click(&self, selector: &str) {
        self.tab.find_element(selector).unwrap().click().unwrap();
    }

    pub(crate) fn press(&self, key: &str) {
        self.tab.press_key(key).unwrap();
    }

    pub(crate) fn press_with_ctrl(&self, key: &str) {
        self.tab
            .press_key_with_modifiers(key, Some(&[ModifierKey::Ctrl]))
            .unwrap();
    }

    /// Types `text` key by key into whatever has the focus.
    pub(crate) fn type_text(&self, text: &str) {
        self.tab.type_str(text).unwrap();
    }

    /// Picks `value` in the `<select id=ID>` the way a keyboard user does:
    /// a click opens it, arrow keys move to the option, Enter takes it.
    pub(crate) fn choose(&self, id: &str, value: &str) {
        let (options, selected): (Vec<String>, usize) = self.json(&format!(
            "(() => {{ const s = document.getElementById('{id}'); \
             return [[...s.options].map(o => o.value), s.selectedIndex]; }})()"
        ));
        let target = options
            .iter()
            .position(|o| o == value)
            .unwrap_or_else(|| panic!("#{id} has no option {value:?}: {options:?}"));
        self.click(&format!("#{id}"));
        let key = if target > selected {
            "ArrowDown"
        } else {
            "ArrowUp"
        };
        for _ in 0..target.abs_diff(selected) {
            self.press(key);
        }
        self.press("Enter");
        let now: String = self.json(&format!("document.getElementById('{id}').value"));
        assert_eq!(now, value, "#{id} after choosing");
    }

    /// What is visible now.
    pub(crate) fn state(&self) -> PageState {
        self.json(STATE_JS)
    }

    /// The hunk marked current, and where it sits in the window.
    pub(crate) fn current(&self) -> Current {
        self.json(CURRENT_JS)
    }

    /// Waits until every visible file has its diff rendered (the page
    /// renders files lazily as they come near the window).
    /// Scrolls to any that is not yet, as a reader would.
    pub(crate) fn wait_rendered(&self) {
        let unrendered = format!(
            "{VISIBLE_SECTIONS}.filter(s => s.querySelector('.body').childElementCount === 0)"
        );
        loop {
            let left: Vec<String> = self.json(&format!("{unrendered}.map(s => s.dataset.path)"));
            let Some(path) = left.first() else { break };
            self.json::<bool>(&format!("({unrendered}[0].scrollIntoView(), true)"));
            self.wait_for(&format!(
                "!{unrendered}.some(s => s.dataset.path === {})",
                serde_json::to_string(path).unwrap()
            ));
        }
    }

    pub(crate) fn screenshot(&self, path: &Path) {
        let png = self
            .tab
            .capture_screenshot(
                headless_chrome::protocol::cdp::Page::CaptureScreenshotFormatOption::Png,
                None,
                None,
                true,
            )
            .unwrap();
        std::fs::write(path, png).unwrap();
    }
}

const VISIBLE_SECTIONS: &str =
    "[...document.querySelectorAll('section.file')].filter(s => s.getClientRects().length > 0)";

/// Visibility is the browser's (an element with layout boxes), not a class.
const STATE_JS: &str = "(() => {
  const shown = el => el.getClientRects().length > 0;
  const hunks = [...document.querySelectorAll('.hunk')].filter(shown);
  return {
    files: [...document.querySelectorAll('section.file')].filter(shown).map(s => s.dataset.path),
    hunks: hunks.map(h => [h.closest('section.file').dataset.path, h.querySelector('.range').textContent]),
    hash: decodeURIComponent(location.hash),
    count: document.getElementById('f-count').textContent,
    errors: document.getElementById('page-errors').textContent,
  };
})()";

const CURRENT_JS: &str = "(() => {
  const shown = el => el.getClientRects().length > 0;
  const marked = document.querySelectorAll('.hunk.current');
  const active = document.activeElement;
  const base = { marked: marked.length, active: active.id || active.tagName };
  if (marked.length !== 1) return base;
  const hunk = marked[0];
  const box = hunk.getBoundingClientRect();
  const label = hunk.querySelector('.label').getBoundingClientRect();
  return Object.assign(base, {
    hunk: [hunk.closest('section.file').dataset.path, hunk.querySelector('.range').textContent],
    index: [...document.querySelectorAll('.hunk')].filter(shown).indexOf(hunk),
    top: box.top, bottom: box.bottom, label_top: label.top, label_bottom: label.bottom,
    bar: document.getElementById('filters').getBoundingClientRect().bottom,
    window: window.innerHeight, scroll: window.scrollY,
  });
})()";

#[derive(serde::Deserialize, Debug)]
pub(crate) struct PageState {
    pub(crate) files: Vec<String>,
    pub(crate) hunks: Vec<(String, String)>,
    pub(crate) hash: String,
    pub(crate) count: String,
    pub(crate) errors: String,
}

#[derive(serde::Deserialize, Debug, Default)]
#[serde(default)]
pub(crate) struct Current {
    /// How many hunks carry the `current` mark (0 or 1).
    pub(crate) marked: usize,
    /// The focused element's id (or tag name).
    pub(crate) active: String,
    pub(crate) hunk: (String, String),
    /// Position among the visible hunks; -1 when the current one is hidden.
    pub(crate) index: i64,
    pub(crate) top: f64,
    pub(crate) bottom: f64,
    pub(crate) label_top: f64,
    pub(crate) label_bottom: f64,
    /// Bottom of the sticky filter bar.
    pub(crate) bar: f64,
    pub(crate) window: f64,
    pub(crate) scroll: f64,
}

impl Current {
    /// The hunk's label (status, rule codes) is on screen below the sticky
    /// filter bar, and so is the whole hunk when it fits.
    pub(crate) fn assert_in_view(&self) {
        let slack = 1.0;
        assert!(
            self.label_top >= self.bar - slack && self.label_bottom <= self.window + slack,
            "label of {:?} off screen: {self:?}",
            self.hunk
        );
        if self.bottom - self.top <= self.window - self.bar {
            assert!(
                self.top >= self.bar - slack && self.bottom <= self.window + slack,
                "{:?} fits but is not wholly on screen: {self:?}",
                self.hunk
            );
        }
    }
}
