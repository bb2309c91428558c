//! `diff A B`: what differed between two stored runs, their environments beside the
//! figures that moved: settings changed, added and removed, the server's version and
//! identity, the client machine's facts and build. The one-line headline puts the
//! largest moves first: `p99 +38%; shared_buffers 4GB → 1GB; server 15.18 → 15.20`.
//! Pure: two stored runs in, text out.

use crate::environment::{ClientFacts, Environment, ServerFacts};
use crate::figures::{figures, Metric};
use crate::store::StoredRun;
use pgbench_results::report::fmt_f;
use std::collections::{BTreeMap, BTreeSet};

/// A figure's move, from A to B.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureMove {
    pub metric: Metric,
    pub a: f64,
    pub b: f64,
    /// `(b - a) / |a|`.
    pub relative: Option<f64>,
}

/// A fact or setting that differs (`None`: absent on that side).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub name: String,
    pub a: Option<String>,
    pub b: Option<String>,
}

/// What differed.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Diff {
    pub figures: Vec<FigureMove>,
    /// Server settings, by name.
    pub settings: Vec<Change>,
    /// The server's version and identity, the client's machine and build.
    pub facts: Vec<Change>,
}

/// The relative move below which a figure is not in the headline (runs of one setup
/// wander by about this much).
pub const HEADLINE_MOVE: f64 = 0.02;

/// The server settings of a run: the environment's (every non-default one, as
/// `SHOW` prints them), else the few the results file records.
fn settings(run: &StoredRun) -> BTreeMap<String, String> {
    match &run.environment.server {
        Some(s) if !s.settings.is_empty() => s
            .settings
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect(),
        _ => run.document.server_settings.clone(),
    }
}

fn facts(run: &StoredRun) -> Vec<(&'static str, Option<String>)> {
    let Environment { client, server } = &run.environment;
    let c = client.clone().unwrap_or_default();
    let s = server.clone().unwrap_or_default();
    let ClientFacts {
        hostname,
        os,
        distribution,
        kernel,
        cpu_model,
        cores,
        memory_bytes,
        pgbench_rs,
    } = c;
    let server_version = run
        .row
        .figures
        .server_version
        .clone()
        .or_else(|| s.short_version());
    let ServerFacts {
        system_identifier,
        managed_service,
        ..
    } = s;
    vec![
        ("server", server_version),
        ("server system identifier", system_identifier),
        ("managed service", managed_service),
        ("client host", hostname.or_else(|| run.row.hostname.clone())),
        ("client os", os),
        ("client distribution", distribution),
        ("client kernel", kernel),
        ("client cpu", cpu_model),
        ("client cores", cores.map(|c| c.to_string())),
        (
            "client memory",
            memory_bytes.map(|m| format!("{} MiB", m / (1024 * 1024))),
        ),
        (
            "build",
            pgbench_rs.or_else(|| run.document.client_version.clone()),
        ),
    ]
}

/// What differed between `a` and `b`.
pub fn diff(a: &StoredRun, b: &StoredRun) -> Diff {
    let (fa, fb) = (figures(&a.document), figures(&b.document));
    let figures = Metric::ALL
        .into_iter()
        .filter_map(|m| {
            let (x, y) = (m.of(&fa)?, m.of(&fb)?);
            Some(FigureMove {
                metric: m,
                a: x,
                b: y,
                relative: (x != 0.0).then(|| (y - x) / x.abs()),
            })
        })
        .collect();
    let (sa, sb) = (settings(a), settings(b));
    let names: BTreeSet<&String> = sa.keys().chain(sb.keys()).collect();
    let settings = names
        .into_iter()
        .filter(|n| sa.get(*n) != sb.get(*n))
        .map(|n| Change {
            name: n.clone(),
            a: sa.get(n).cloned(),
            b: sb.get(n).cloned(),
        })
        .collect();
    let facts = facts(a)
        .into_iter()
        .zip(facts(b))
        .filter(|((_, x), (_, y))| x != y && (x.is_some() && y.is_some()))
        .map(|((name, x), (_, y))| Change {
            name: name.to_string(),
            a: x,
            b: y,
        })
        .collect();
    Diff {
        figures,
        settings,
        facts,
    }
}

fn side(v: &Option<String>) -> &str {
    v.as_deref().unwrap_or("(not set)")
}

fn percent(r: Option<f64>) -> String {
    r.map_or("changed".to_string(), |r| format!("{:+.0}%", 100.0 * r))
}

impl Diff {
    /// The headline: the figures that moved by [`HEADLINE_MOVE`] or more (largest
    /// first), then every setting and fact that differs.
    pub fn headline(&self) -> String {
        let mut moved: Vec<&FigureMove> = self
            .figures
            .iter()
            .filter(|f| f.relative.is_none_or(|r| r.abs() >= HEADLINE_MOVE) && f.a != f.b)
            .collect();
        moved.sort_by(|x, y| {
            let size = |f: &FigureMove| f.relative.map_or(f64::INFINITY, f64::abs);
            size(y).total_cmp(&size(x))
        });
        let mut parts: Vec<String> = moved
            .iter()
            .map(|f| format!("{} {}", f.metric.name(), percent(f.relative)))
            .collect();
        for c in self.settings.iter().chain(&self.facts) {
            parts.push(format!("{} {} → {}", c.name, side(&c.a), side(&c.b)));
        }
        match parts.is_empty() {
            true => "no difference".to_string(),
            false => parts.join("; "),
        }
    }

    /// The headline, then a table of the figures and the lists of what differed.
    pub fn render(&self, a: &str, b: &str) -> String {
        let mut out = format!("{}\n\nfigures ({a} → {b}):\n", self.headline());
        for f in &self.figures {
            out.push_str(&format!(
                "  {:<26} {:>12} → {:<12} {}\n",
                f.metric.label(),
                fmt_f(f.a, 3),
                fmt_f(f.b, 3),
                if f.a == f.b {
                    "same".to_string()
                } else {
                    percent(f.relative)
                }
            ));
        }
        for (title, list) in [("settings", &self.settings), ("environment", &self.facts)] {
            if list.is_empty() {
                out.push_str(&format!("{title}: the same\n"));
                continue;
            }
            out.push_str(&format!("{title}:\n"));
            for c in list {
                let how = match (&c.a, &c.b) {
                    (None, Some(_)) => " (added)",
                    (Some(_), None) => " (removed)",
                    _ => "",
                };
                out.push_str(&format!(
                    "  {}: {} → {}{how}\n",
                    c.name,
                    side(&c.a),
                    side(&c.b)
                ));
            }
        }
        out
    }
}
