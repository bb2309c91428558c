//! A results page as a person sees it: crates/results/tests/browser/check-page.js
//! opens it in headless Chromium (with Node) and says what it drew, which
//! [`check_page`] reads back as a [`PageCheck`].

use std::path::{Path, PathBuf};
use std::process::Command;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A program on PATH (or named by `env`), or `None`.
fn program(env: &str, name: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p));
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Chromium and Node, or `None` with a note; in CI (`CI=true`) their absence fails.
fn browser_tools() -> Option<(PathBuf, PathBuf)> {
    match (program("CHROMIUM", "chromium"), program("NODE", "node")) {
        (Some(c), Some(n)) => Some((c, n)),
        missing => {
            let msg = format!(
                "the browser test needs chromium and node (Debian packages chromium, nodejs; .ci/run installs them); found {missing:?}"
            );
            super::skip(&msg);
            None
        }
    }
}

/// What crates/results/tests/browser/check-page.js saw of `page`.
#[derive(Debug, Default)]
pub struct PageCheck {
    pub requests: Vec<String>,
    pub problems: Vec<String>,
    /// id -> (coloured plot pixels, dark pixels left, dark pixels below, per colour)
    pub charts: Vec<(String, u64, u64, u64, Vec<u64>)>,
    /// (chart id, kind, pixels of the mark's colour in its box, the box's area)
    pub marks: Vec<(String, String, u64, u64)>,
    /// (chart id, kind, series pixels in the upper half of the mark's box)
    pub marks_top: Vec<(String, String, u64)>,
    pub drawn: usize,
    /// id -> what the chart plots: x values, then each series' values.
    pub data: Vec<(String, Vec<Vec<Option<f64>>>)>,
    /// id -> the names of its series, the x axis's first.
    pub legends: Vec<(String, Vec<String>)>,
    /// (chart id, a mark's name, where it was drawn: left, top, width, height)
    pub labels: Vec<(String, String, [f64; 4])>,
    /// id -> each row's cell texts, as shown, of the page's tables with an id.
    pub tables: Vec<(String, Vec<Vec<String>>)>,
}

impl PageCheck {
    /// The names of marks drawn over each other on one chart.
    pub fn overlapping_labels(&self) -> Vec<(String, String, String)> {
        let mut found = Vec::new();
        for (i, (chart, a, [l, t, w, h])) in self.labels.iter().enumerate() {
            for (chart2, b, [l2, t2, w2, h2]) in &self.labels[i + 1..] {
                let apart = l + w <= *l2 || l2 + w2 <= *l || t + h <= *t2 || t2 + h2 <= *t;
                if chart == chart2 && !apart {
                    found.push((chart.clone(), a.clone(), b.clone()));
                }
            }
        }
        found
    }
}

/// The value of `KEY=value` among a line's words.
fn field<'a>(words: &[&'a str], key: &str) -> &'a str {
    words.iter().find_map(|f| f.strip_prefix(key)).unwrap()
}

pub fn check_page(page: &Path, shot: &Path) -> Option<PageCheck> {
    let (chromium, node) = browser_tools()?;
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("crates/results/tests/browser/check-page.js");
    let out = Command::new(node)
        .arg(script)
        .arg(chromium)
        .arg(page)
        .arg(shot)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "check-page: {}",
        text(&out.stderr)
    );
    let mut c = PageCheck::default();
    for line in text(&out.stdout).lines() {
        let (kind, rest) = line.split_once(' ').unwrap_or((line, ""));
        match kind {
            "request" => c.requests.push(rest.to_string()),
            "console" | "exception" => c.problems.push(line.to_string()),
            "drawn" => c.drawn = rest.parse().unwrap(),
            "mark" => {
                let w: Vec<&str> = rest.split(' ').collect();
                let n = |k: &str| field(&w, k).parse::<u64>().unwrap();
                c.marks
                    .push((w[0].into(), w[1].into(), n("pixels="), n("area=")));
            }
            "marktop" => {
                let w: Vec<&str> = rest.split(' ').collect();
                let n = field(&w, "series=").parse::<u64>().unwrap();
                c.marks_top.push((w[0].into(), w[1].into(), n));
            }
            "data" => {
                let (id, values) = rest.split_once(' ').unwrap();
                c.data
                    .push((id.to_string(), serde_json::from_str(values).unwrap()));
            }
            "label" => {
                let (id, json) = rest.split_once(' ').unwrap();
                let v: serde_json::Value = serde_json::from_str(json).unwrap();
                let n = |k: &str| v[k].as_f64().unwrap();
                c.labels.push((
                    id.to_string(),
                    v["text"].as_str().unwrap().to_string(),
                    [n("left"), n("top"), n("width"), n("height")],
                ));
            }
            "table" => {
                let (id, rows) = rest.split_once(' ').unwrap();
                c.tables
                    .push((id.to_string(), serde_json::from_str(rows).unwrap()));
            }
            "legend" => {
                let (id, names) = rest.split_once(' ').unwrap();
                c.legends
                    .push((id.to_string(), serde_json::from_str(names).unwrap()));
            }
            "chart" => {
                let w: Vec<&str> = rest.split(' ').collect();
                let n = |k: &str| field(&w, k).parse::<u64>().unwrap();
                let colours = field(&w, "colours=")
                    .split(',')
                    .map(|v| v.parse().unwrap())
                    .collect();
                c.charts.push((
                    w[0].to_string(),
                    n("coloured="),
                    n("dark_left="),
                    n("dark_bottom="),
                    colours,
                ));
            }
            _ => {}
        }
    }
    Some(c)
}
