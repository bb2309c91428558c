//! Stock pgbench's stderr: its `progress:` lines (`-P`) become a [`Timeline`], and
//! `setting random seed to N` gives the seed. Other lines (vacuum, errors) are skipped.

use super::{plausible, ImportError};
use crate::timeline::{Point, Timeline, TimelineSource};

/// What stderr tells.
#[derive(Debug, Default)]
pub struct Stderr {
    pub timeline: Option<Timeline>,
    pub random_seed: Option<u64>,
    /// `Run was aborted; the above results are incomplete.`
    pub aborted: bool,
}

/// `progress: 2.0 s, 517.0 tps, lat 6.915 ms stddev 6.726, 12 failed[, lag 0.187 ms]
/// [, 10 skipped][, 215 retried, 706 retries]` (the time is Unix seconds with
/// `--progress-timestamp`). Every figure is finite and not negative, every count whole.
fn progress_line(file: &str, line_no: usize, rest: &str) -> Result<(f64, Point), ImportError> {
    let err = |message: String| ImportError::Progress {
        file: file.to_string(),
        line: line_no,
        message,
    };
    let bad = || err("cannot read this progress: line".to_string());
    let mut p = Point::default();
    let mut end = None;
    for part in rest.split(", ") {
        let w: Vec<&str> = part.split_whitespace().collect();
        let f = |s: &str, what: &str| -> Result<f64, ImportError> {
            s.parse::<f64>().map_err(|_| bad())?;
            plausible::figure(s, what, "pgbench").map_err(err)
        };
        let n = |s: &str, what: &str| -> Result<i64, ImportError> {
            s.parse::<i64>().map_err(|_| bad())?;
            plausible::count(s, what, i64::MAX, "pgbench").map_err(err)
        };
        match w.as_slice() {
            [t, "s"] => end = Some(f(t, "the time")?),
            [v, "tps"] => p.tps = f(v, "tps")?,
            ["lat", l, "ms", "stddev", sd] => {
                p.latency_avg_ms = Some(f(l, "lat")?);
                p.latency_stddev_ms = Some(f(sd, "stddev")?);
            }
            [v, "failed"] => p.failures = Some(n(v, "failed")?),
            ["lag", l, "ms"] => p.lag_avg_ms = Some(f(l, "lag")?),
            [v, "skipped"] => p.skipped = Some(n(v, "skipped")?),
            [v, "retried"] => p.retried = Some(n(v, "retried")?),
            [v, "retries"] => p.retries = Some(n(v, "retries")?),
            _ => return Err(bad()),
        }
    }
    let end = end.ok_or_else(bad)?;
    // A time past the year 2100 is neither seconds into a run nor a Unix time.
    if end >= super::logs::MAX_UNIX_S as f64 {
        return Err(err(format!(
            "the time {end:e} s is not a time pgbench prints"
        )));
    }
    Ok((end, p))
}

pub fn parse(file: &str, text: &str) -> Result<Stderr, ImportError> {
    let mut out = Stderr::default();
    let mut ends = Vec::new();
    let mut points = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(rest) = line.strip_prefix("progress: ") {
            let (end, p) = progress_line(file, i + 1, rest)?;
            ends.push(end);
            points.push(p);
        } else if let Some(seed) = line.strip_prefix("pgbench: setting random seed to ") {
            out.random_seed = seed.trim().parse().ok();
        } else if line.contains("Run was aborted; the above results are incomplete.") {
            out.aborted = true;
        }
    }
    if points.is_empty() {
        return Ok(out);
    }
    // Each line closes an interval that started at the previous line; the first
    // interval started at 0, or, with Unix timestamps, one interval before it.
    let epoch = ends[0] > 1e9;
    let first_len = if epoch {
        ends.get(1).map_or(1.0, |e| e - ends[0])
    } else {
        ends[0]
    };
    let origin = if epoch { ends[0] - first_len } else { 0.0 };
    let mut prev = origin;
    for (p, end) in points.iter_mut().zip(&ends) {
        p.t_s = prev - origin;
        p.length_s = (end - prev).max(1e-9);
        prev = *end;
    }
    out.timeline = Some(Timeline {
        source: TimelineSource::Progress,
        points,
    });
    Ok(out)
}
