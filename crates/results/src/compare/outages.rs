//! What `compare` sets beside its table for `--reconnect` runs: each side's outages
//! (how many, how long in all, the longest, the time until tps was back at 95% of
//! its level before) and a later side's longest outage against the first side's.
//! Outages are rare events, not samples: no interval, only the lengths seen.

use super::Side;
use crate::availability::Availability;
use pgbench_script::cnum::fmt_f;

/// One side's outages over its runs.
#[derive(Debug, Clone, Copy, PartialEq)]
struct SideOutages {
    count: usize,
    total_s: f64,
    longest_s: Option<f64>,
    /// The slowest return to 95% of the tps before, from the first failure.
    recovery_s: Option<f64>,
    /// Transactions in doubt (the server may have committed them).
    in_doubt: i64,
    /// Some outage was not over, or some client gave up: the lengths are lower bounds.
    unresolved: bool,
    gave_up: usize,
}

fn of_side(side: &Side) -> Option<SideOutages> {
    let runs: Vec<&Availability> = side
        .runs
        .iter()
        .filter_map(|d| d.run.as_ref()?.availability.as_ref())
        .collect();
    if runs.is_empty() {
        return None;
    }
    let max = |a: Option<f64>, b: Option<f64>| match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    };
    Some(runs.iter().fold(
        SideOutages {
            count: 0,
            total_s: 0.0,
            longest_s: None,
            recovery_s: None,
            in_doubt: 0,
            unresolved: false,
            gave_up: 0,
        },
        |acc, a| {
            SideOutages {
                count: acc.count + a.outages.len(),
                total_s: acc.total_s + a.total_outage_s(),
                longest_s: max(acc.longest_s, a.longest_outage_s()),
                recovery_s: a
                    .outages
                    .iter()
                    .filter_map(|o| o.recovery_s())
                    .fold(acc.recovery_s, |m, r| max(m, Some(r))),
                in_doubt: acc.in_doubt + a.in_doubt,
                unresolved: acc.unresolved || !a.all_over(),
                gave_up: acc.gave_up + a.gave_up,
            }
        },
    ))
}

/// The lines, a heading first; none when no side ran with `--reconnect`.
pub fn lines(sides: &[Side]) -> Vec<String> {
    let all: Vec<Option<SideOutages>> = sides.iter().map(of_side).collect();
    if all.iter().all(Option::is_none) {
        return Vec::new();
    }
    let first = all.first().copied().flatten().and_then(|o| o.longest_s);
    let mut out = vec!["outages (--reconnect):".to_string()];
    for (i, (side, o)) in sides.iter().zip(&all).enumerate() {
        let letter = char::from(b'A' + (i % 26) as u8);
        let Some(o) = o else {
            out.push(format!(
                "  {letter}: {}: not run with --reconnect",
                side.label
            ));
            continue;
        };
        let at_least = if o.unresolved { "at least " } else { "" };
        let mut line = format!(
            "  {letter}: {}: {} outage(s), {at_least}{} s in all",
            side.label,
            o.count,
            fmt_f(o.total_s, 3)
        );
        if let Some(longest) = o.longest_s {
            line.push_str(&format!(", the longest {at_least}{} s", fmt_f(longest, 3)));
            if let (true, Some(base)) = (i > 0, first.filter(|b| *b > 0.0)) {
                let change = 100.0 * (longest / base - 1.0);
                let sign = if change >= 0.0 { "+" } else { "" };
                line.push_str(&format!(" ({sign}{}% on A)", fmt_f(change, 1)));
            }
        }
        if let Some(r) = o.recovery_s {
            line.push_str(&format!(", tps back at 95% after {} s", fmt_f(r, 3)));
        }
        line.push_str(&format!(", {} in doubt", o.in_doubt));
        if o.gave_up > 0 {
            line.push_str(&format!(", {} client(s) gave up", o.gave_up));
        }
        out.push(line);
    }
    out
}
