//! The availability block printed after the report (`--reconnect`), and the names of
//! the SQLSTATE classes it counts failures by. Instants print as UTC clock times to
//! the millisecond (to set beside a server log kept in UTC) and as seconds into the
//! measured part.

use super::{Availability, Outage};
use pgbench_script::cnum::fmt_f;
use std::fmt::Write;

/// PostgreSQL's name of an SQLSTATE class (its first two characters), lower case.
pub fn class_name(class: &str) -> &'static str {
    match class {
        "08" => "connection exception",
        "25" => "invalid transaction state",
        "40" => "transaction rollback",
        "53" => "insufficient resources",
        "57" => "operator intervention",
        "58" => "system error",
        "XX" => "internal error",
        _ => "other",
    }
}

/// The block, every line ending in a newline.
pub fn render_block(a: &Availability) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "availability (--reconnect, timeout {} s, backoff up to {} ms):",
        fmt_f(a.reconnect_timeout_s, 0),
        a.backoff_max_ms
    );
    let _ = writeln!(
        out,
        "outages: {}, {}{} s in all; reconnects: {}; clients that gave up: {}",
        a.outages.len(),
        if a.all_over() { "" } else { "at least " },
        fmt_f(a.total_outage_s(), 3),
        a.reconnects,
        a.gave_up
    );
    let _ = writeln!(
        out,
        "transactions in doubt: {} (connection lost after a statement that may commit was sent: the server may have committed them)",
        a.in_doubt
    );
    for (i, o) in a.outages.iter().enumerate() {
        outage(&mut out, i + 1, o, a.measured_from_unix_us);
    }
    if !a.failed.is_empty() {
        let _ = writeln!(out, "failed transactions by SQLSTATE class:");
        for (class, (n, states)) in a.failed_by_class() {
            let states: Vec<String> = states.iter().map(|(s, n)| format!("{s} {n}")).collect();
            let _ = writeln!(
                out,
                "  {class} ({}): {n} ({})",
                class_name(&class),
                states.join(", ")
            );
        }
    }
    out
}

fn outage(out: &mut String, number: usize, o: &Outage, origin: i64) {
    let _ = write!(
        out,
        "outage {number}: {} clients, {} failed transactions ({} in doubt), {} reconnects",
        o.clients, o.failed_transactions, o.in_doubt, o.reconnects
    );
    if o.gave_up > 0 {
        let _ = write!(out, ", {} clients gave up", o.gave_up);
    }
    out.push('\n');
    let at = |t: Option<i64>| match t {
        Some(t) => format!(
            "{} ({} s into the run)",
            utc_ms(t),
            fmt_f((t - origin) as f64 / 1e6, 3)
        ),
        None => "none before the run's end".to_string(),
    };
    let lines = [
        ("last success before", at(o.last_success_before_unix_us)),
        ("first failure", at(Some(o.first_failure_unix_us))),
        ("first success after", at(o.first_success_after_unix_us)),
        ("all clients back", at(o.all_back_unix_us)),
    ];
    for (what, when) in lines {
        let _ = writeln!(out, "  {what:<20} {when}");
    }
    match (o.length_s(), o.seen_until_unix_us) {
        (Some(length), _) => {
            let _ = write!(
                out,
                "  length: {} s from the first failure",
                fmt_f(length, 3)
            );
            if let Some(bound) = o.bound_s() {
                let _ = write!(out, ", {} s from the last success", fmt_f(bound, 3));
            }
            out.push('\n');
        }
        (None, Some(until)) => {
            let why = match o.gave_up {
                0 => "still going on at the run's end".to_string(),
                n => format!("{n} clients gave up, the last {}", at(Some(until))),
            };
            let _ = writeln!(
                out,
                "  length: at least {} s from the first failure, not over: {why}",
                fmt_f(o.at_least_s(), 3)
            );
        }
        (None, None) => {}
    }
    match (o.tps_before, o.recovery_s()) {
        (Some(level), Some(back)) => {
            let _ = writeln!(
                out,
                "  tps back at 95% of its level before ({}): {} s after the first failure",
                fmt_f(level, 1),
                fmt_f(back, 3)
            );
        }
        (Some(level), None) => {
            let _ = writeln!(
                out,
                "  tps not back at 95% of its level before ({}) by the run's end",
                fmt_f(level, 1)
            );
        }
        (None, _) => {
            let _ = writeln!(out, "  tps before: under a second measured, no level");
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS.mmm UTC` of Unix µs.
pub(super) fn utc_ms(unix_us: i64) -> String {
    let ms = unix_us.div_euclid(1000);
    let (days, ms_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let (y, m, d) = crate::date::civil_from_days(days);
    let s = ms_of_day / 1000;
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02}.{:03} UTC",
        s / 3600,
        s / 60 % 60,
        s % 60,
        ms_of_day % 1000
    )
}
