//! The comparison as a text table: one row per figure, each side's value, then for
//! each later side its change against the first, the 95 % interval and the verdict;
//! under it, a `warning:` line for each caveat (what makes the runs unlike).

use super::{Comparison, Method};
use crate::report::fmt_f;
use std::fmt::Write;

/// `+5.9` / `-0.3`, with `prec` decimals.
pub fn signed(v: f64, prec: usize) -> String {
    if v.is_infinite() {
        return if v > 0.0 { "+inf" } else { "-inf" }.to_string();
    }
    let s = fmt_f(v, prec);
    if v >= 0.0 {
        format!("+{s}")
    } else {
        s
    }
}

fn method_line(c: &Comparison) -> &'static str {
    match c.method {
        Method::Runs => "95% intervals: Welch's t over each side's runs",
        Method::Seconds => "95% intervals: batch means over each run's per-second series",
        Method::None => "no intervals: groups need 3 runs a side (or one run a side)",
    }
}

/// The table `compare` prints.
pub fn render_table(c: &Comparison) -> String {
    let mut out = String::new();
    for (i, (label, n)) in c.labels.iter().zip(&c.files).enumerate() {
        let _ = writeln!(
            out,
            "{}: {label}{}",
            (b'A' + i as u8) as char,
            if *n > 1 {
                format!(" ({n} runs)")
            } else {
                String::new()
            }
        );
    }
    let _ = writeln!(out, "{}\n", method_line(c));
    let mut header = vec!["figure".to_string()];
    header.extend((0..c.labels.len()).map(|i| ((b'A' + i as u8) as char).to_string()));
    for i in 1..c.labels.len() {
        let l = (b'A' + i as u8) as char;
        header.extend([
            format!("{l} vs A"),
            "95% interval".to_string(),
            String::new(),
        ]);
    }
    let mut rows = vec![header];
    for r in &c.rows {
        let mut row = vec![r.figure.label()];
        row.extend(r.values.iter().map(|v| r.figure.format().show(*v)));
        for ch in &r.changes {
            row.push(
                ch.ratio
                    .map_or("-".into(), |x| format!("{}%", signed(100.0 * x, 1))),
            );
            row.push(ch.interval.map_or(String::new(), |i| {
                format!(
                    "[{}%, {}%]",
                    signed(100.0 * i.low, 1),
                    signed(100.0 * i.high, 1)
                )
            }));
            row.push(ch.verdict.text().to_string());
        }
        rows.push(row);
    }
    let cols = rows[0].len();
    let widths: Vec<usize> = (0..cols)
        .map(|i| rows.iter().map(|r| r[i].chars().count()).max().unwrap_or(0))
        .collect();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if i == 0
                || i + 1 == cols
                || (i > c.labels.len() && (i - c.labels.len()).is_multiple_of(3))
            {
                let _ = write!(line, "{cell}{}  ", " ".repeat(pad));
            } else {
                let _ = write!(line, "{}{cell}  ", " ".repeat(pad));
            }
        }
        let _ = writeln!(out, "{}", line.trim_end());
    }
    for block in [&c.outages, &c.stages, &c.scenarios] {
        if !block.is_empty() {
            out.push('\n');
            for line in block {
                let _ = writeln!(out, "{line}");
            }
        }
    }
    if !c.caveats.is_empty() {
        out.push('\n');
        for caveat in &c.caveats {
            let _ = writeln!(out, "warning: {caveat}");
        }
    }
    out
}
