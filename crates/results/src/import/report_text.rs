//! Reads stock pgbench 15's report (its stdout) back into a [`Summary`]: each line
//! `printResults()` can print, by its fixed wording. Lines it does not print leave
//! their figures `None`, except where their absence itself tells the value (no
//! `maximum number of tries` line means unlimited, no retry lines mean no retries).

use super::{plausible, ImportError};
use crate::summary::{Failures, ScriptSummary, StatementSummary, Summary};

/// What the version banner says: `pgbench (15.18 (Debian ...))`, or with
/// `, server 16.1` when the server's version differs.
#[derive(Debug, Default, PartialEq)]
pub struct Banner {
    pub client: Option<String>,
    pub server: Option<String>,
}

fn banner(line: &str) -> Option<Banner> {
    let inner = line.strip_prefix("pgbench (")?.strip_suffix(')')?;
    let (client, server) = match inner.rfind(", server ") {
        Some(i) => (
            &inner[..i],
            Some(inner[i + ", server ".len()..].to_string()),
        ),
        None => (inner, None),
    };
    // Without `, server`, the server's version number is the client's.
    let number = client.split_whitespace().next().map(str::to_string);
    Some(Banner {
        client: Some(format!("pgbench {client}")),
        server: server.or(number),
    })
}

/// Reads `file`'s text into the summary and the banner.
pub fn parse(file: &str, text: &str) -> Result<(Summary, Banner), ImportError> {
    let mut p = Parser {
        file,
        line_no: 0,
        s: Summary::default(),
        banner: Banner::default(),
        statements_with_retries: false,
        in_statements: false,
    };
    for (i, line) in text.lines().enumerate() {
        p.line_no = i + 1;
        p.line(line)?;
    }
    if p.s.transaction_type.is_none() {
        return Err(ImportError::NotAReport {
            file: file.to_string(),
        });
    }
    // Every report pgbench finishes has its tps line.
    if p.s.tps.is_none() {
        return Err(ImportError::Report {
            file: file.to_string(),
            line: p.line_no,
            message: "the report ends before its \"tps = \" line (a truncated file?)".into(),
        });
    }
    p.finish();
    Ok((p.s, p.banner))
}

struct Parser<'a> {
    file: &'a str,
    line_no: usize,
    s: Summary,
    banner: Banner,
    statements_with_retries: bool,
    in_statements: bool,
}

/// The count before ` (3.4%)` in `12 (3.4%)`.
fn before_paren(v: &str) -> &str {
    v.split_whitespace().next().unwrap_or("")
}

/// `7.304 ms` or `7.304 ms (including failures)` → `7.304`.
fn ms_text(v: &str) -> &str {
    v.split_whitespace().next().unwrap_or("")
}

/// Where a line is, for errors.
#[derive(Clone, Copy)]
struct At<'a> {
    file: &'a str,
    line: usize,
}

impl At<'_> {
    fn error(self, message: String) -> ImportError {
        ImportError::Report {
            file: self.file.to_string(),
            line: self.line,
            message,
        }
    }

    fn bad(self, what: &str) -> ImportError {
        self.error(format!("cannot read {what}"))
    }

    /// A count pgbench prints from a C int or int64: never negative, and a client or
    /// thread count within an int (a larger one is a wrapped or edited number).
    fn count(self, v: &str, what: &str, max: i64) -> Result<i64, ImportError> {
        plausible::count(v, what, max, "pgbench").map_err(|m| self.error(m))
    }

    /// A count of transactions (an int64).
    fn tx(self, v: &str, what: &str) -> Result<i64, ImportError> {
        self.count(v, what, i64::MAX)
    }

    /// A latency, rate or time: finite and not negative.
    fn figure(self, v: &str, what: &str) -> Result<f64, ImportError> {
        plausible::figure(v, what, "pgbench").map_err(|m| self.error(m))
    }
}

impl<'a> Parser<'a> {
    fn at(&self) -> At<'a> {
        At {
            file: self.file,
            line: self.line_no,
        }
    }

    fn line(&mut self, line: &str) -> Result<(), ImportError> {
        let at = self.at();
        if let Some(b) = banner(line) {
            self.banner = b;
            return Ok(());
        }
        if let Some(rest) = line.strip_prefix("SQL script ") {
            let name = rest
                .split_once(": ")
                .ok_or_else(|| at.bad("script name"))?
                .1;
            self.in_statements = false;
            self.s.scripts.push(empty_script(name));
            return Ok(());
        }
        if self.in_statements && line.starts_with("   ") {
            return self.statement(line);
        }
        self.in_statements = false;
        if line.starts_with("statement latencies in milliseconds") {
            // `-r` with one script: its block has no header of its own.
            let name = self.s.transaction_type.clone().unwrap_or_default();
            self.s.scripts.push(empty_script(&name));
            self.start_statements(line);
            return Ok(());
        }
        match line.strip_prefix(" - ") {
            Some(rest) if !self.s.scripts.is_empty() => self.script_line(rest),
            _ => self.total_line(line),
        }
    }

    fn total_line(&mut self, line: &str) -> Result<(), ImportError> {
        let at = self.at();
        let Some((key, v)) = line.split_once(": ").or_else(|| line.split_once(" = ")) else {
            return Ok(());
        };
        let int = i64::from(i32::MAX);
        let s = &mut self.s;
        match key {
            "transaction type" if s.transaction_type.is_some() => {
                return Err(at.error("a second report starts here (one report per file)".into()));
            }
            "transaction type" => s.transaction_type = Some(v.to_string()),
            "scaling factor" => s.scaling_factor = Some(at.count(v, key, int)?),
            "partition method" => s.partition_method = Some(v.to_string()),
            "partitions" => s.partitions = Some(at.count(v, key, int)?),
            "query mode" => s.query_mode = Some(v.to_string()),
            "number of clients" => s.clients = Some(at.count(v, key, int)?),
            "number of threads" => s.threads = Some(at.count(v, key, int)?),
            // An unsigned int in pgbench.
            "maximum number of tries" => s.max_tries = Some(at.count(v, key, u32::MAX.into())?),
            "number of transactions per client" => {
                s.transactions_per_client = Some(at.count(v, key, int)?)
            }
            "duration" => s.duration_s = Some(at.count(v.trim_end_matches(" s"), key, int)?),
            "number of transactions actually processed" => {
                let done = v.split('/').next().unwrap_or(v);
                s.transactions = Some(at.tx(done, key)?);
            }
            "latency average" => s.latency_avg_ms = Some(at.figure(ms_text(v), key)?),
            "latency stddev" => s.latency_stddev_ms = Some(at.figure(ms_text(v), key)?),
            "rate limit schedule lag" => self.lag(v)?,
            "initial connection time" => {
                s.initial_connection_time_ms = Some(at.figure(ms_text(v), key)?);
            }
            "average connection time" => {
                s.average_connection_time_ms = Some(at.figure(ms_text(v), key)?);
            }
            "tps" => s.tps = Some(at.figure(ms_text(v), key)?),
            k if k.starts_with("number of transactions above the ") => {
                let limit = k
                    .strip_prefix("number of transactions above the ")
                    .and_then(|r| r.strip_suffix(" ms latency limit"))
                    .ok_or_else(|| at.bad(key))?;
                s.latency_limit_ms = Some(at.figure(limit, key)?);
                let late = v.split('/').next().unwrap_or(v);
                s.late = Some(at.tx(late, key)?);
            }
            _ => counters(at, key, v, Counters::of_run(s))?,
        }
        Ok(())
    }

    fn lag(&mut self, v: &str) -> Result<(), ImportError> {
        let at = self.at();
        // `avg 0.282 (max 17.754) ms`
        let words: Vec<&str> = v.split_whitespace().collect();
        match words.as_slice() {
            ["avg", avg, "(max", max, "ms"] => {
                self.s.lag_avg_ms = Some(at.figure(avg, "lag")?);
                self.s.lag_max_ms = Some(at.figure(max.trim_end_matches(')'), "lag")?);
                Ok(())
            }
            _ => Err(at.bad("rate limit schedule lag")),
        }
    }

    fn start_statements(&mut self, key: &str) {
        self.in_statements = true;
        self.statements_with_retries = key.contains("retries");
    }

    fn script_line(&mut self, rest: &str) -> Result<(), ImportError> {
        let at = self.at();
        if rest.starts_with("statement latencies in milliseconds") {
            self.start_statements(rest);
            return Ok(());
        }
        let Some(sc) = self.s.scripts.last_mut() else {
            return Err(at.bad(rest));
        };
        if let Some(w) = rest.strip_prefix("weight: ") {
            sc.weight = Some(at.count(before_paren(w), "weight", i32::MAX.into())?);
        } else if let Some((n, tail)) = rest.split_once(" transactions (") {
            sc.transactions = Some(at.tx(n, "transactions")?);
            let tps = tail
                .split("tps = ")
                .nth(1)
                .and_then(|t| t.strip_suffix(')'))
                .ok_or_else(|| at.bad(rest))?;
            sc.tps = Some(at.figure(tps, "tps")?);
        } else if let Some((key, v)) = rest.split_once(" = ") {
            let v = at.figure(ms_text(v), key)?;
            match key {
                "latency average" => sc.latency_avg_ms = Some(v),
                "latency stddev" => sc.latency_stddev_ms = Some(v),
                _ => {}
            }
        } else if let Some((key, v)) = rest.split_once(": ") {
            counters(at, key, v, Counters::of_script(sc))?;
        }
        Ok(())
    }

    /// `      0.246          28        2675  UPDATE ...`: average, failures, retries
    /// (with `--max-tries` other than 1), then two spaces and the command.
    fn statement(&mut self, line: &str) -> Result<(), ImportError> {
        let at = self.at();
        let fields = if self.statements_with_retries { 3 } else { 2 };
        let mut rest = line;
        let mut nums = Vec::with_capacity(3);
        for _ in 0..fields {
            rest = rest.trim_start_matches(' ');
            let end = rest.find(' ').ok_or_else(|| at.bad("statement line"))?;
            nums.push(&rest[..end]);
            rest = &rest[end..];
        }
        let command = rest
            .strip_prefix("  ")
            .ok_or_else(|| at.bad("statement line"))?;
        let st = StatementSummary {
            command: command.to_string(),
            latency_ms: at.figure(nums[0], "statement latency")?,
            failures: at.tx(nums[1], "statement failures")?,
            retries: match nums.get(2) {
                Some(r) => Some(at.tx(r, "statement retries")?),
                None => Some(0),
            },
        };
        let bad = at.bad("statement line");
        self.s.scripts.last_mut().ok_or(bad)?.statements.push(st);
        Ok(())
    }

    /// Fills what the absence of lines tells.
    fn finish(&mut self) {
        let s = &mut self.s;
        if s.max_tries.is_none() {
            s.max_tries = Some(0);
        }
        let single = s.max_tries == Some(1);
        let throttled_limited = s.lag_avg_ms.is_some() && s.latency_limit_ms.is_some();
        s.latency_avg_derived = s.latency_avg_ms.is_some() && s.latency_stddev_ms.is_none();
        for (retried, retries, skipped) in
            std::iter::once((&mut s.retried, &mut s.retries, &mut s.skipped)).chain(
                s.scripts
                    .iter_mut()
                    .map(|sc| (&mut sc.retried, &mut sc.retries, &mut sc.skipped)),
            )
        {
            if single {
                retried.get_or_insert(0);
                retries.get_or_insert(0);
            }
            if !throttled_limited {
                skipped.get_or_insert(0);
            }
        }
        if s.scripts.is_empty() {
            let name = s.transaction_type.clone().unwrap_or_default();
            s.scripts.push(empty_script(&name));
        }
        if s.scripts.len() == 1 && s.scripts[0].transactions.is_none() {
            self.finish_single();
        }
    }

    /// One script: its figures are the run's.
    fn finish_single(&mut self) {
        let s = &mut self.s;
        let sc = &mut s.scripts[0];
        sc.weight.get_or_insert(1);
        sc.transactions = s.transactions;
        sc.tps = s.tps;
        sc.failures = s.failures;
        sc.retried = s.retried;
        sc.retries = s.retries;
        sc.skipped = s.skipped;
        sc.latency_avg_ms = s.latency_avg_ms.filter(|_| !s.latency_avg_derived);
        sc.latency_stddev_ms = s.latency_stddev_ms;
    }
}

pub(crate) fn empty_script(name: &str) -> ScriptSummary {
    ScriptSummary {
        name: name.to_string(),
        weight: None,
        transactions: None,
        tps: None,
        failures: None,
        retried: None,
        retries: None,
        skipped: None,
        latency_avg_ms: None,
        latency_stddev_ms: None,
        percentiles: None,
        statements: Vec::new(),
    }
}

/// Where the failure, retry and skip lines go: the run's figures or one script's.
struct Counters<'s> {
    failures: &'s mut Option<Failures>,
    retried: &'s mut Option<i64>,
    retries: &'s mut Option<i64>,
    skipped: &'s mut Option<i64>,
}

impl<'s> Counters<'s> {
    fn of_run(s: &'s mut Summary) -> Self {
        Counters {
            failures: &mut s.failures,
            retried: &mut s.retried,
            retries: &mut s.retries,
            skipped: &mut s.skipped,
        }
    }

    fn of_script(s: &'s mut ScriptSummary) -> Self {
        Counters {
            failures: &mut s.failures,
            retried: &mut s.retried,
            retries: &mut s.retries,
            skipped: &mut s.skipped,
        }
    }
}

/// The failure, retry and skip lines, for the run or one script; other lines are
/// left alone.
fn counters(at: At, key: &str, v: &str, c: Counters) -> Result<(), ImportError> {
    let n = || at.tx(before_paren(v), key);
    match key {
        "number of failed transactions" => {
            c.failures.get_or_insert_with(Failures::default).total = n()?
        }
        "number of serialization failures" => {
            c.failures
                .get_or_insert_with(Failures::default)
                .serialization = Some(n()?)
        }
        "number of other failures" => {
            c.failures.get_or_insert_with(Failures::default).other = Some(n()?)
        }
        "number of deadlock failures" => {
            c.failures.get_or_insert_with(Failures::default).deadlock = Some(n()?)
        }
        "number of transactions retried" => *c.retried = Some(n()?),
        "total number of retries" => *c.retries = Some(n()?),
        "number of transactions skipped" => *c.skipped = Some(n()?),
        _ => {}
    }
    Ok(())
}
