//! Reads HammerDB's TPROC-C output for PostgreSQL (the CLI's `vurun` output, every
//! virtual user's line prefixed `Vuser N:`) into a [`Summary`], so a HammerDB run and
//! a `--workload=tpcc` run of pgbench-rs compare on NOPM and TPM. The lines are those
//! of HammerDB's postgresql/pgoltp.tcl (the monitor virtual user's rampup,
//! timing and `TEST RESULT` lines), modules/tpcccommon-1.0.tm (`testresult`, in
//! either order of its figures) and `hammerdbcli` (the version banner). Where the
//! capture also holds the time profile (modules/xtprof-1.0.tm's report, written to
//! `hdbxtprofile.log`), its summary of all virtual users gives each transaction's
//! calls, average, standard deviation and percentiles. HammerDB prints no latency of
//! the whole run, no failures and no tps: they stay `None`.

use super::report_text::Banner;
use super::ImportError;
use crate::summary::{PercentileSummary, ScriptSummary, Summary};
use std::collections::BTreeMap;

/// What a HammerDB capture says.
#[derive(Debug, Default, PartialEq)]
pub struct Hammerdb {
    pub summary: Summary,
    pub banner: Banner,
    /// The run's settings under pgbench-rs's option names: `client` (the active
    /// virtual users), `warmup` (the rampup, s), `time` (the timed test, s) and
    /// `workload` (`tpcc`).
    pub options: BTreeMap<String, serde_json::Value>,
}

/// Whether `text` is HammerDB's output rather than a pgbench report.
pub fn is_hammerdb(text: &str) -> bool {
    text.starts_with("HammerDB CLI") || text.contains("TEST RESULT : System achieved ")
}

/// A line without its `Vuser N:` prefix (the CLI's, for a virtual user's output).
fn unprefixed(line: &str) -> &str {
    let t = line.trim();
    match t.strip_prefix("Vuser ").and_then(|r| r.split_once(':')) {
        Some((n, rest)) if n.chars().all(|c| c.is_ascii_digit()) => rest.trim(),
        _ => t,
    }
}

/// `N NOPM from M PostgreSQL TPM`, or with `first_result` TPM, `M PostgreSQL TPM at
/// N NOPM`: (NOPM, TPM).
fn test_result(rest: &str) -> Option<(i64, i64)> {
    let w: Vec<&str> = rest.split_whitespace().collect();
    match w.as_slice() {
        [nopm, "NOPM", "from", tpm, _, "TPM", ..] | [tpm, _, "TPM", "at", nopm, "NOPM", ..] => {
            Some((nopm.parse().ok()?, tpm.parse().ok()?))
        }
        _ => None,
    }
}

/// The first number of `text` (`5` of `5 in minutes`).
fn leading_number(text: &str) -> Option<f64> {
    text.split_whitespace().next()?.parse().ok()
}

/// Reads `file`'s text.
pub fn parse(file: &str, text: &str) -> Result<Hammerdb, ImportError> {
    let mut h = Hammerdb {
        summary: Summary {
            transaction_type: Some("<HammerDB TPROC-C>".to_string()),
            ..Summary::default()
        },
        ..Hammerdb::default()
    };
    let put = |h: &mut Hammerdb, k: &str, v: serde_json::Value| {
        h.options.insert(k.to_string(), v);
    };
    put(&mut h, "workload", "tpcc".into());
    let mut profile = Profile::default();
    for (i, line) in text.lines().enumerate() {
        let t = unprefixed(line);
        if let Some(v) = t.strip_prefix("HammerDB CLI ") {
            h.banner.client = Some(format!("HammerDB {}", v.trim()));
        } else if let Some(v) = t.strip_prefix("DBVersion:") {
            h.banner.server = Some(v.trim().to_string()).filter(|v| v != "NULL");
        } else if let Some(rest) = t.strip_prefix("Beginning rampup time of ") {
            if let Some(m) = leading_number(rest) {
                put(&mut h, "warmup", ((m * 60.0).round() as i64).into());
            }
        } else if let Some(rest) = t.strip_prefix("Timing test period of ") {
            let seconds = leading_number(rest).map(|m| (m * 60.0).round() as i64);
            h.summary.duration_s = seconds;
            put(&mut h, "time", seconds.into());
        } else if let Some(n) = t
            .strip_suffix("Active Virtual Users configured")
            .and_then(leading_number)
        {
            h.summary.clients = Some(n as i64);
            put(&mut h, "client", (n as i64).into());
        } else if let Some(rest) = t.strip_prefix("TEST RESULT : System achieved ") {
            let (nopm, tpm) = test_result(rest).ok_or_else(|| ImportError::Report {
                file: file.to_string(),
                line: i + 1,
                message: "cannot read this TEST RESULT line".to_string(),
            })?;
            (h.summary.nopm, h.summary.tpm) = (Some(nopm), Some(tpm));
        } else {
            profile.line(t);
        }
    }
    if h.summary.nopm.is_none() {
        return Err(ImportError::NotAReport {
            file: file.to_string(),
        });
    }
    h.summary.scripts = profile.scripts;
    Ok(h)
}

/// The time profile's summary of all virtual users (the per-user blocks before it
/// are left out): a `>>>>> PROC: NAME` line, then its `CALLS:` and `P99:` lines.
#[derive(Debug, Default)]
struct Profile {
    in_summary: bool,
    scripts: Vec<ScriptSummary>,
}

impl Profile {
    fn line(&mut self, t: &str) {
        if t.starts_with(">>>>> SUMMARY OF ") || t.starts_with(">>>>> VIRTUAL USER ") {
            self.in_summary = t.starts_with(">>>>> SUMMARY OF ");
            return;
        }
        if !self.in_summary {
            return;
        }
        if let Some(name) = t.strip_prefix(">>>>> PROC: ") {
            let name = name.trim().to_lowercase();
            self.scripts.push(super::report_text::empty_script(&name));
        } else if let Some(s) = self.scripts.last_mut() {
            // `CALLS: 9\tMIN: 0.631ms\tAVG: ...`, tab-separated.
            let fields: BTreeMap<&str, f64> = t
                .split('\t')
                .filter_map(|f| f.split_once(':'))
                .filter_map(|(k, v)| {
                    let v = v.trim().trim_end_matches("ms").trim_end_matches('%');
                    Some((k.trim(), v.parse().ok()?))
                })
                .collect();
            if let Some(&calls) = fields.get("CALLS") {
                s.transactions = Some(calls as i64);
                s.latency_avg_ms = fields.get("AVG").copied();
                let max_ms = fields.get("MAX").copied().unwrap_or(0.0);
                s.percentiles = Some(PercentileSummary {
                    values: Vec::new(),
                    max_ms,
                    count: calls as u64,
                });
            } else if let Some(p) = s
                .percentiles
                .as_mut()
                .filter(|_| fields.contains_key("P99"))
            {
                p.values = [25.0, 50.0, 75.0, 95.0, 99.0]
                    .into_iter()
                    .filter_map(|q| Some((q, *fields.get(format!("P{q}").as_str())?)))
                    .collect();
                s.latency_stddev_ms = fields.get("SD").copied();
            }
        }
    }
}

#[cfg(test)]
mod tests;
