//! What no run can have measured, refused as a results file is read: a negative
//! count, tps, latency or duration (a hand-edited or corrupted file), and a
//! sweep's or search's representative step that is not among its steps. Every verb
//! would otherwise print or compare them as figures (#43). Each refusal names the
//! field by its path in the file, so the file can be fixed.

use super::ResultsFile;
use crate::stats::{Counts, SimpleStats, StatsData};
use crate::summary::{Failures, PercentileSummary, Summary};

/// Why a results file holds what no run measures.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Impossible {
    #[error("{field} is {value}: no run measures a negative {what}")]
    Negative {
        field: String,
        value: String,
        what: &'static str,
    },
    #[error(
        "{field} is {step}, but the file has no step {step} (its steps: {steps}): the file was edited or cut short"
    )]
    NoSuchStep {
        field: String,
        step: u32,
        steps: String,
    },
}

/// The first impossible figure of `doc` (its steps' files included), if any.
pub fn check(doc: &ResultsFile) -> Result<(), Impossible> {
    file(doc, "")
}

fn file(doc: &ResultsFile, at: &str) -> Result<(), Impossible> {
    summary(&doc.summary, &format!("{at}summary"))?;
    if let Some(run) = &doc.run {
        let at = format!("{at}run");
        stats(&run.total, &format!("{at}.total"))?;
        for (i, s) in run.scripts.iter().enumerate() {
            stats(&s.stats, &format!("{at}.scripts[{i}]"))?;
        }
        for (i, s) in run.series.iter().enumerate() {
            counts(&s.counts, &format!("{at}.series[{i}]"))?;
            latency(&s.latency, &format!("{at}.series[{i}].latency"))?;
        }
        for (name, v) in [
            ("bench_duration_us", run.bench_duration_us),
            ("conn_total_duration_us", run.conn_total_duration_us),
            ("conn_elapsed_duration_us", run.conn_elapsed_duration_us),
        ] {
            not_negative(&format!("{at}.{name}"), v, "duration")?;
        }
        count(&format!("{at}.latency_late"), run.latency_late)?;
    }
    if let Some(t) = &doc.imported_timeline {
        for (i, p) in t.points.iter().enumerate() {
            let at = format!("{at}timeline.points[{i}]");
            not_negative(&format!("{at}.tps"), p.tps, "tps")?;
            for (name, v) in [
                ("transactions", p.transactions),
                ("failures", p.failures),
                ("skipped", p.skipped),
            ] {
                count(&format!("{at}.{name}"), v.unwrap_or(0))?;
            }
            for (name, v) in [
                ("latency_avg_ms", p.latency_avg_ms),
                ("latency_min_ms", p.latency_min_ms),
                ("latency_max_ms", p.latency_max_ms),
            ] {
                not_negative(&format!("{at}.{name}"), v.unwrap_or(0.0), "latency")?;
            }
        }
    }
    if let Some(c) = &doc.capacity {
        if let Some(n) = c.representative {
            if !doc.steps.iter().any(|s| s.step == n) {
                let steps: Vec<String> = doc.steps.iter().map(|s| s.step.to_string()).collect();
                return Err(Impossible::NoSuchStep {
                    field: format!("{at}capacity.representative"),
                    step: n,
                    steps: match steps.is_empty() {
                        true => "none".to_string(),
                        false => steps.join(", "),
                    },
                });
            }
        }
    }
    for (i, s) in doc.steps.iter().enumerate() {
        file(&s.file, &format!("{at}steps[{i}].file."))?;
    }
    Ok(())
}

fn summary(s: &Summary, at: &str) -> Result<(), Impossible> {
    for (name, v) in [
        ("scaling_factor", s.scaling_factor),
        ("partitions", s.partitions),
        ("clients", s.clients),
        ("threads", s.threads),
        ("max_tries", s.max_tries),
        ("transactions_per_client", s.transactions_per_client),
        ("duration_s", s.duration_s),
        ("transactions", s.transactions),
        ("retried", s.retried),
        ("retries", s.retries),
        ("skipped", s.skipped),
        ("late", s.late),
        ("aborted_clients", s.aborted_clients),
    ] {
        count(&format!("{at}.{name}"), v.unwrap_or(0))?;
    }
    failures(s.failures.as_ref(), &format!("{at}.failures"))?;
    not_negative(&format!("{at}.tps"), s.tps.unwrap_or(0.0), "tps")?;
    for (name, v) in [
        ("latency_limit_ms", s.latency_limit_ms),
        ("latency_avg_ms", s.latency_avg_ms),
        ("latency_stddev_ms", s.latency_stddev_ms),
        ("initial_connection_time_ms", s.initial_connection_time_ms),
        ("average_connection_time_ms", s.average_connection_time_ms),
    ] {
        not_negative(&format!("{at}.{name}"), v.unwrap_or(0.0), "latency")?;
    }
    percentiles(s.percentiles.as_ref(), &format!("{at}.percentiles"))?;
    for (i, sc) in s.scripts.iter().enumerate() {
        let at = format!("{at}.scripts[{i}]");
        for (name, v) in [
            ("weight", sc.weight),
            ("transactions", sc.transactions),
            ("retried", sc.retried),
            ("retries", sc.retries),
            ("skipped", sc.skipped),
        ] {
            count(&format!("{at}.{name}"), v.unwrap_or(0))?;
        }
        failures(sc.failures.as_ref(), &format!("{at}.failures"))?;
        not_negative(&format!("{at}.tps"), sc.tps.unwrap_or(0.0), "tps")?;
        for (name, v) in [
            ("latency_avg_ms", sc.latency_avg_ms),
            ("latency_stddev_ms", sc.latency_stddev_ms),
        ] {
            not_negative(&format!("{at}.{name}"), v.unwrap_or(0.0), "latency")?;
        }
        percentiles(sc.percentiles.as_ref(), &format!("{at}.percentiles"))?;
        for (j, st) in sc.statements.iter().enumerate() {
            let at = format!("{at}.statements[{j}]");
            not_negative(&format!("{at}.latency_ms"), st.latency_ms, "latency")?;
            count(&format!("{at}.failures"), st.failures)?;
            count(&format!("{at}.retries"), st.retries.unwrap_or(0))?;
        }
    }
    Ok(())
}

fn failures(f: Option<&Failures>, at: &str) -> Result<(), Impossible> {
    let Some(f) = f else {
        return Ok(());
    };
    count(&format!("{at}.total"), f.total)?;
    for (name, v) in [
        ("serialization", f.serialization),
        ("deadlock", f.deadlock),
        ("other", f.other),
    ] {
        count(&format!("{at}.{name}"), v.unwrap_or(0))?;
    }
    Ok(())
}

fn percentiles(p: Option<&PercentileSummary>, at: &str) -> Result<(), Impossible> {
    let Some(p) = p else {
        return Ok(());
    };
    for (i, (_, ms)) in p.values.iter().enumerate() {
        not_negative(&format!("{at}.values[{i}]"), *ms, "latency")?;
    }
    not_negative(&format!("{at}.max_ms"), p.max_ms, "latency")
}

fn stats(s: &StatsData, at: &str) -> Result<(), Impossible> {
    counts(&s.counts, at)?;
    latency(&s.latency, &format!("{at}.latency"))
}

fn counts(c: &Counts, at: &str) -> Result<(), Impossible> {
    for (name, v) in [
        ("cnt", c.cnt),
        ("skipped", c.skipped),
        ("retries", c.retries),
        ("retried", c.retried),
        ("serialization_failures", c.serialization_failures),
        ("deadlock_failures", c.deadlock_failures),
        ("other_sql_failures", c.other_sql_failures),
    ] {
        count(&format!("{at}.{name}"), v)?;
    }
    Ok(())
}

/// A latency's counters, µs (the lag's are left alone: a schedule's lag is the
/// client's clock against the schedule, not a measure that cannot be below 0).
fn latency(s: &SimpleStats, at: &str) -> Result<(), Impossible> {
    count(&format!("{at}.count"), s.count)?;
    for (name, v) in [
        ("min", s.min),
        ("max", s.max),
        ("sum", s.sum),
        ("sum2", s.sum2),
    ] {
        not_negative(&format!("{at}.{name}"), v, "latency")?;
    }
    Ok(())
}

fn count(field: &str, v: i64) -> Result<(), Impossible> {
    match v < 0 {
        true => Err(Impossible::Negative {
            field: field.to_string(),
            value: v.to_string(),
            what: "count",
        }),
        false => Ok(()),
    }
}

fn not_negative(field: &str, v: f64, what: &'static str) -> Result<(), Impossible> {
    match v < 0.0 {
        true => Err(Impossible::Negative {
            field: field.to_string(),
            value: v.to_string(),
            what,
        }),
        false => Ok(()),
    }
}
