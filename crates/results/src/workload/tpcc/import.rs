//! Reads HammerDB's TPROC-C output for PostgreSQL (the CLI's `vurun` output, every
//! virtual user's line prefixed `Vuser N:`) into a [`Summary`], so a HammerDB run and
//! a `--workload=tpcc` run of pgbench-rs compare on NOPM and TPM. The lines are those
//! of HammerDB's postgresql/pgoltp.tcl (the monitor virtual user's rampup,
//! timing and `TEST RESULT` lines), modules/tpcccommon-1.0.tm (`testresult`, in
//! either order of its figures) and `hammerdbcli` (the version banner). Where the
//! capture also holds the time profile (modules/xtprof-1.0.tm's report, written to
//! `hdbxtprofile.log`), its summary of all virtual users gives each transaction's
//! calls, average, standard deviation and percentiles. HammerDB 4.12 and 5.0's summary
//! counts every call twice (with its job storage on, the default) and prints the SD
//! in microseconds (6.0 fixed both, and prints `SD: ...ms`): the import halves the
//! calls where they are twice the virtual users' blocks' sum (or, without the blocks,
//! in the old layout) and converts the SD to ms. The profile's counts cover the
//! ramp-up as well as the timed test: the option `time_profile_s` says how long.
//! HammerDB prints no latency of the whole run, no failures and no tps: they stay
//! `None`.

use crate::import::error::ImportError;
use crate::import::plausible;
use crate::import::report_text::{self, Banner};
use crate::summary::{PercentileSummary, ScriptSummary, Summary};
use crate::workload::kind::{Imported, Importer, Tool};
use std::collections::BTreeMap;

/// The reader of HammerDB's output.
pub struct Hammerdb;

pub static IMPORTER: Hammerdb = Hammerdb;

static TOOL: Tool = Tool {
    name: HAMMERDB,
    percentiles_title: "latency percentiles in milliseconds (HammerDB's own):",
};

impl Importer for Hammerdb {
    fn tool(&self) -> &'static Tool {
        &TOOL
    }

    fn recognises(&self, text: &str) -> bool {
        is_hammerdb(text)
    }

    fn made(&self, transaction_type: &str, client: &str) -> bool {
        transaction_type.starts_with("<HammerDB") || client.starts_with(HAMMERDB)
    }

    fn takes_test(&self) -> bool {
        false
    }

    fn import(&self, file: &str, text: &str, _: Option<&str>) -> Result<Imported, ImportError> {
        let h = parse(file, text)?;
        Ok(Imported {
            summary: h.summary,
            banner: h.banner,
            options: h.options,
        })
    }
}

/// What a HammerDB capture says.
#[derive(Debug, Default, PartialEq)]
pub struct Capture {
    pub summary: Summary,
    pub banner: Banner,
    /// The run's settings under pgbench-rs's option names: `client` (the active
    /// virtual users), `warmup` (the rampup, s), `time` (the timed test, s) and
    /// `workload` (`tpcc`); with a time profile, `time_profile_s`, the time its counts
    /// cover (rampup and timed test).
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

const HAMMERDB: &str = "HammerDB";

/// `N NOPM from M PostgreSQL TPM`, or with `first_result` TPM, `M PostgreSQL TPM at
/// N NOPM`: (NOPM, TPM), as their texts.
fn test_result(rest: &str) -> Option<(&str, &str)> {
    let w: Vec<&str> = rest.split_whitespace().collect();
    match w.as_slice() {
        [nopm, "NOPM", "from", tpm, _, "TPM", ..] | [tpm, _, "TPM", "at", nopm, "NOPM", ..] => {
            Some((nopm, tpm))
        }
        _ => None,
    }
}

/// The first word of `text` (`5` of `5 in minutes`).
fn first_word(text: &str) -> &str {
    text.split_whitespace().next().unwrap_or("")
}

/// `N minutes` as whole seconds, for a run's length.
fn minutes(text: &str, what: &str) -> Result<i64, String> {
    let m = plausible::figure(first_word(text), what, HAMMERDB)?;
    let s = plausible::duration_s(m * 60.0, what, HAMMERDB)?;
    Ok(s.round() as i64)
}

/// Reads `file`'s text.
pub fn parse(file: &str, text: &str) -> Result<Capture, ImportError> {
    let mut h = Capture {
        summary: Summary {
            transaction_type: Some("<HammerDB TPROC-C>".to_string()),
            ..Summary::default()
        },
        ..Capture::default()
    };
    let put = |h: &mut Capture, k: &str, v: serde_json::Value| {
        h.options.insert(k.to_string(), v);
    };
    put(&mut h, "workload", "tpcc".into());
    let mut profile = Profile::default();
    for (i, line) in text.lines().enumerate() {
        let at = |message: String| ImportError::Report {
            file: file.to_string(),
            line: i + 1,
            message,
        };
        let t = unprefixed(line);
        if let Some(v) = t.strip_prefix("HammerDB CLI ") {
            h.banner.client = Some(format!("HammerDB {}", v.trim()));
        } else if let Some(v) = t.strip_prefix("DBVersion:") {
            h.banner.server = Some(v.trim().to_string()).filter(|v| v != "NULL");
        } else if let Some(rest) = t.strip_prefix("Beginning rampup time of ") {
            put(
                &mut h,
                "warmup",
                minutes(rest, "rampup time").map_err(at)?.into(),
            );
        } else if let Some(rest) = t.strip_prefix("Timing test period of ") {
            let seconds = minutes(rest, "test period").map_err(at)?;
            h.summary.duration_s = Some(seconds);
            put(&mut h, "time", seconds.into());
        } else if let Some(n) = t.strip_suffix("Active Virtual Users configured") {
            let users = plausible::count(
                first_word(n),
                "active virtual users",
                plausible::MAX_CLIENTS,
                HAMMERDB,
            )
            .map_err(at)?;
            h.summary.clients = Some(users);
            put(&mut h, "client", users.into());
        } else if let Some(rest) = t.strip_prefix("TEST RESULT : System achieved ") {
            let unreadable = || at("cannot read this TEST RESULT line".to_string());
            let (nopm, tpm) = test_result(rest).ok_or_else(unreadable)?;
            let count = |v: &str, what: &str| {
                let digits = v.strip_prefix('-').unwrap_or(v);
                if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                    return Err(unreadable());
                }
                plausible::count(v, what, i64::MAX, HAMMERDB).map_err(at)
            };
            h.summary.workload.tpcc.nopm = Some(count(nopm, "NOPM")?);
            h.summary.workload.tpcc.tpm = Some(count(tpm, "TPM")?);
        } else {
            profile.line(t).map_err(at)?;
        }
    }
    if h.summary.workload.tpcc.nopm.is_none() {
        return Err(ImportError::NotAReport {
            file: file.to_string(),
        });
    }
    h.summary.scripts = profile.finish();
    if !h.summary.scripts.is_empty() {
        let s = |k: &str| h.options.get(k).and_then(serde_json::Value::as_i64);
        if let (Some(warmup), Some(time)) = (s("warmup"), s("time")) {
            put(&mut h, "time_profile_s", (warmup + time).into());
        }
    }
    Ok(h)
}

/// The time profile's summary of all virtual users (the per-user blocks before it
/// are left out): a `>>>>> PROC: NAME` line, then its `CALLS:` and `P99:` lines.
#[derive(Debug, Default)]
struct Profile {
    in_summary: bool,
    scripts: Vec<ScriptSummary>,
    /// Each transaction's calls summed over the virtual users' blocks.
    user_calls: BTreeMap<String, i64>,
    /// The block's transaction, in the virtual users' blocks.
    user_proc: Option<String>,
    /// The summary printed the SD in ms (HammerDB 6), not µs (4.12, 5.0).
    sd_in_ms: bool,
}

impl Profile {
    /// Takes one line; the message says what in it is not a figure HammerDB prints.
    fn line(&mut self, t: &str) -> Result<(), String> {
        if t.starts_with(">>>>> SUMMARY OF ") || t.starts_with(">>>>> VIRTUAL USER ") {
            self.in_summary = t.starts_with(">>>>> SUMMARY OF ");
            return Ok(());
        }
        if !self.in_summary {
            self.user_line(t);
            return Ok(());
        }
        if let Some(name) = t.strip_prefix(">>>>> PROC: ") {
            let name = name.trim().to_lowercase();
            self.scripts.push(report_text::empty_script(&name));
            return Ok(());
        }
        let Some(s) = self.scripts.last_mut() else {
            return Ok(());
        };
        // `CALLS: 9\tMIN: 0.631ms\tAVG: ...`, tab-separated.
        let fields: BTreeMap<&str, &str> = t
            .split('\t')
            .filter_map(|f| f.split_once(':'))
            .map(|(k, v)| {
                let v = v.trim().trim_end_matches("ms").trim_end_matches('%');
                (k.trim(), v)
            })
            .collect();
        let ms = |k: &str| -> Result<Option<f64>, String> {
            fields
                .get(k)
                .map(|v| plausible::figure(v, k, HAMMERDB))
                .transpose()
        };
        if let Some(calls) = fields.get("CALLS") {
            let calls = plausible::count(calls, "CALLS", i64::MAX, HAMMERDB)?;
            s.transactions = Some(calls);
            s.latency_avg_ms = ms("AVG")?;
            s.percentiles = Some(PercentileSummary {
                values: Vec::new(),
                max_ms: ms("MAX")?.unwrap_or(0.0),
                count: calls as u64,
            });
        } else if fields.contains_key("P99") {
            let mut values = Vec::new();
            for q in [25.0, 50.0, 75.0, 95.0, 99.0] {
                if let Some(v) = ms(&format!("P{q}"))? {
                    values.push((q, v));
                }
            }
            if let Some(p) = s.percentiles.as_mut() {
                p.values = values;
                s.latency_stddev_ms = ms("SD")?;
                self.sd_in_ms = t
                    .split('\t')
                    .any(|f| f.trim().starts_with("SD: ") && f.trim().ends_with("ms"));
            }
        }
        Ok(())
    }
}

impl Profile {
    /// A line of a virtual user's block: its `>>>>> PROC:` and `CALLS:` lines.
    fn user_line(&mut self, t: &str) {
        if let Some(name) = t.strip_prefix(">>>>> PROC: ") {
            self.user_proc = Some(name.trim().to_lowercase());
        } else if let (Some(name), Some(calls)) = (&self.user_proc, t.strip_prefix("CALLS: ")) {
            let calls: i64 = calls
                .split('\t')
                .next()
                .and_then(|c| c.trim().parse().ok())
                .unwrap_or(0);
            *self.user_calls.entry(name.clone()).or_default() += calls;
        }
    }

    /// The summary's transactions with HammerDB 4.12 and 5.0's errors undone: the
    /// calls counted twice, the SD in µs.
    fn finish(mut self) -> Vec<ScriptSummary> {
        for s in &mut self.scripts {
            let Some(calls) = s.transactions else {
                continue;
            };
            let doubled = match self.user_calls.get(&s.name) {
                Some(&sum) => calls == 2 * sum && sum > 0,
                None => !self.sd_in_ms,
            };
            if doubled {
                s.transactions = Some(calls / 2);
                if let Some(p) = s.percentiles.as_mut() {
                    p.count = (calls / 2) as u64;
                }
            }
            if !self.sd_in_ms {
                s.latency_stddev_ms = s.latency_stddev_ms.map(|us| us / 1000.0);
            }
        }
        self.scripts
    }
}

#[cfg(test)]
mod tests;
