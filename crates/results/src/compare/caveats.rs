//! What `compare` says about the runs beside its table: each file's validity warnings
//! (a run interrupted, a cold start, a client bottleneck: what its figures are not
//! to be trusted for), and runs of different lengths set side by side, whose figures
//! differ for that alone (caches warming, checkpoints, autovacuum, growing tables).
//! The verdicts are the intervals' all the same; these say when a verdict compares
//! unlike runs.

use super::Side;
use crate::document::ResultsFile;
use crate::run::Limit;

/// Runs whose lengths differ by more than this share are not of one length.
const LENGTH_SLACK: f64 = 0.1;
/// The warning the verdicts give themselves ("too short to tell").
const TOLD_BY_VERDICTS: &str = "too_short_to_compare";

/// The caveats of comparing `sides`, one line each.
pub fn of(sides: &[Side]) -> Vec<String> {
    let mut out = Vec::new();
    for (letter, side) in letters(sides) {
        for (i, doc) in side.runs.iter().enumerate() {
            let name = match side.runs.len() {
                1 => format!("{letter}: {}", side.label),
                n => format!("{letter}, run {} of {n}", i + 1),
            };
            // The table's verdicts already say when a run is too short to tell.
            for w in doc.warnings.iter().filter(|w| w.code != TOLD_BY_VERDICTS) {
                out.push(format!("{name}: {}: {}", w.code, w.message));
            }
        }
    }
    out.extend(lengths(sides));
    out
}

fn letters(sides: &[Side]) -> impl Iterator<Item = (char, &Side)> {
    sides
        .iter()
        .enumerate()
        .map(|(i, s)| ((b'A' + i as u8) as char, s))
}

/// How long a run was, to tell runs of different lengths apart.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Length {
    /// A `-T` run's measured seconds (or `-T` itself for an import).
    Seconds(f64),
    /// A `-t` run's transactions, over all its clients.
    Transactions(i64),
    Unknown,
}

fn length(doc: &ResultsFile) -> Length {
    match &doc.run {
        Some(run) => match run.settings.limit {
            Limit::Duration(_) => Length::Seconds(run.bench_duration_us / 1e6),
            Limit::Transactions(n) => {
                Length::Transactions(i64::from(n) * run.settings.clients as i64)
            }
        },
        None => {
            let s = &doc.summary;
            match (s.duration_s, s.transactions_per_client, s.clients) {
                (Some(secs), _, _) => Length::Seconds(secs as f64),
                (None, Some(n), Some(c)) => Length::Transactions(n * c),
                _ => Length::Unknown,
            }
        }
    }
}

fn show(l: Length) -> String {
    match l {
        Length::Seconds(s) => format!("{s:.1} s"),
        Length::Transactions(n) => format!("{n} transactions"),
        Length::Unknown => "unknown".to_string(),
    }
}

/// Whether every known length is the same (seconds within [`LENGTH_SLACK`]).
fn one_length(all: &[Length]) -> bool {
    let known: Vec<Length> = all
        .iter()
        .copied()
        .filter(|l| *l != Length::Unknown)
        .collect();
    let seconds: Vec<f64> = known
        .iter()
        .filter_map(|l| match l {
            Length::Seconds(s) => Some(*s),
            _ => None,
        })
        .collect();
    let transactions: Vec<i64> = known
        .iter()
        .filter_map(|l| match l {
            Length::Transactions(n) => Some(*n),
            _ => None,
        })
        .collect();
    if !seconds.is_empty() && !transactions.is_empty() {
        return false;
    }
    let (low, high) = seconds
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), s| {
            (lo.min(*s), hi.max(*s))
        });
    let seconds_alike = seconds.is_empty() || high <= low * (1.0 + LENGTH_SLACK);
    seconds_alike && transactions.windows(2).all(|w| w[0] == w[1])
}

/// A line when the runs are not of one length.
fn lengths(sides: &[Side]) -> Option<String> {
    let all: Vec<Length> = sides.iter().flat_map(|s| &s.runs).map(length).collect();
    if one_length(&all) {
        return None;
    }
    let each: Vec<String> = letters(sides)
        .map(|(letter, side)| {
            let runs: Vec<String> = side.runs.iter().map(|d| show(length(d))).collect();
            format!("{letter} {}", runs.join(", "))
        })
        .collect();
    Some(format!(
        "the runs differ in length ({}), and a run's figures depend on its length (caches warming, checkpoints, autovacuum, growing tables): compare runs of one length",
        each.join("; ")
    ))
}
