//! `--scenarios=FILE`: the TOML file of several scenarios run together, read into
//! [`ScenarioSpec`]s. A scenario is a group of clients with its own scripts, `-R` rate
//! and connection target (docs/load-shapes.md, "Scenarios"). This module owns the
//! file's keys and their checks; what the scripts are (a builtin, a `--workload`, a
//! file) is the command line's to resolve (`cli::options::scenarios`), and how the
//! groups run is the engine's (`bench::scenario`). Pure: the file's text is passed in.
//!
//! Every error names the file, the line and the key, from the spans the `toml` crate
//! keeps of each key and value.

use std::ops::Range;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

/// The keys a `[[scenario]]` table takes, in the order the docs list them.
pub const KEYS: [&str; 9] = [
    "name",
    "script",
    "weight",
    "clients",
    "threads",
    "rate",
    "rate_stages",
    "client_stages",
    "conninfo",
];

/// What is wrong with a scenarios file; each names the file and, where there is one,
/// the line and the key.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ScenarioError {
    #[error("could not read scenarios file \"{path}\": {reason}")]
    Read { path: String, reason: String },
    #[error("{path}:{line}: invalid TOML: {message}")]
    Syntax {
        path: String,
        line: usize,
        message: String,
    },
    #[error("{path}:{line}: unknown key \"{key}\"{place} (known keys: {known})")]
    UnknownKey {
        path: String,
        line: usize,
        key: String,
        /// ` in scenario "NAME"`, or empty at the top level.
        place: String,
        known: String,
    },
    #[error("{path}:{line}: key \"{key}\": {problem}")]
    BadValue {
        path: String,
        line: usize,
        key: String,
        problem: String,
    },
    #[error("{path}:{line}: scenario {index} has no \"{key}\"")]
    Missing {
        path: String,
        line: usize,
        index: usize,
        key: &'static str,
    },
    #[error("{path}: no [[scenario]] table")]
    Empty { path: String },
}

/// One script of a scenario: a builtin's name, a `--workload` name or a file's path,
/// and its weight among the scenario's scripts.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptSpec {
    pub source: String,
    pub weight: i64,
}

/// One `[[scenario]]` table, checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioSpec {
    pub name: String,
    /// Where its table starts, for the errors found later (a script that cannot be
    /// read, a conninfo that does not parse).
    pub line: usize,
    pub scripts: Vec<ScriptSpec>,
    /// Its clients, as `-c`; under `client_stages`, the count the first stage starts
    /// from (and may be left out: 1).
    pub clients: Option<usize>,
    /// Its own threads; 1 by default.
    pub threads: Option<usize>,
    /// Its own `-R`, transactions per second.
    pub rate: Option<f64>,
    /// Its connection string or URI, over the command line's options.
    pub conninfo: Option<String>,
    /// `rate_stages` / `client_stages` as written, with their lines: the stages'
    /// syntax is `--rate-stages`' own.
    pub rate_stages: Option<(String, usize)>,
    pub client_stages: Option<(String, usize)>,
    /// The line of each key given, for the errors found later.
    pub key_lines: Vec<(String, usize)>,
}

impl ScenarioSpec {
    /// The line of `key` (of the table, where the key is not given).
    pub fn line_of(&self, key: &str) -> usize {
        self.key_lines
            .iter()
            .find(|(k, _)| k == key)
            .map_or(self.line, |(_, line)| *line)
    }
}

/// Reads the scenarios of the file at `path` whose text is `text`.
pub fn parse(path: &str, text: &str) -> Result<Vec<ScenarioSpec>, ScenarioError> {
    let at = Place { path, text };
    let doc = DeTable::parse(text).map_err(|e| ScenarioError::Syntax {
        path: path.to_string(),
        line: e.span().map_or(1, |s| at.line(&s)),
        message: e.message().to_string(),
    })?;
    let mut tables = Vec::new();
    for (key, value) in doc.get_ref() {
        if key.get_ref() != "scenario" {
            return Err(at.unknown(key, "", &["scenario"]));
        }
        let DeValue::Array(array) = value.get_ref() else {
            return Err(at.bad(key, "expected [[scenario]] tables"));
        };
        for item in array.iter() {
            let DeValue::Table(table) = item.get_ref() else {
                return Err(at.bad(key, "expected [[scenario]] tables"));
            };
            tables.push((table, at.line(&item.span())));
        }
    }
    if tables.is_empty() {
        return Err(ScenarioError::Empty {
            path: path.to_string(),
        });
    }
    let mut scenarios: Vec<ScenarioSpec> = Vec::with_capacity(tables.len());
    for (i, (table, line)) in tables.into_iter().enumerate() {
        let s = at.scenario(table, i + 1, line)?;
        if let Some(earlier) = scenarios.iter().find(|e| e.name == s.name) {
            let key = table
                .get_key_value("name")
                .map(|(k, _)| k)
                .expect("a scenario has a name");
            return Err(at.bad(
                key,
                &format!(
                    "scenario \"{}\" is named twice (line {} too)",
                    s.name, earlier.line
                ),
            ));
        }
        scenarios.push(s);
    }
    Ok(scenarios)
}

/// The file being read, for the errors' places.
struct Place<'a> {
    path: &'a str,
    text: &'a str,
}

type Key<'i> = Spanned<std::borrow::Cow<'i, str>>;
type Value<'i> = Spanned<DeValue<'i>>;

impl Place<'_> {
    /// The 1-based line of a span's start.
    fn line(&self, span: &Range<usize>) -> usize {
        let end = span.start.min(self.text.len());
        self.text.as_bytes()[..end]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1
    }

    fn unknown(&self, key: &Key<'_>, place: &str, known: &[&str]) -> ScenarioError {
        ScenarioError::UnknownKey {
            path: self.path.to_string(),
            line: self.line(&key.span()),
            key: key.get_ref().to_string(),
            place: place.to_string(),
            known: known.join(", "),
        }
    }

    fn bad(&self, key: &Key<'_>, problem: &str) -> ScenarioError {
        ScenarioError::BadValue {
            path: self.path.to_string(),
            line: self.line(&key.span()),
            key: key.get_ref().to_string(),
            problem: problem.to_string(),
        }
    }

    /// One `[[scenario]]` table (the `index`th, at `line`).
    fn scenario(
        &self,
        table: &DeTable<'_>,
        index: usize,
        line: usize,
    ) -> Result<ScenarioSpec, ScenarioError> {
        let name = match table.get_key_value("name") {
            Some((k, v)) => self.text_of(k, v)?,
            None => return Err(self.missing(line, index, "name")),
        };
        let place = format!(" in scenario \"{name}\"");
        if let Some((key, _)) = table
            .iter()
            .find(|(k, _)| !KEYS.contains(&k.get_ref().as_ref()))
        {
            return Err(self.unknown(key, &place, &KEYS));
        }
        let field = |name: &str| table.get_key_value(name);
        let sources = match field("script") {
            Some((k, v)) => self.texts_of(k, v)?,
            None => return Err(self.missing(line, index, "script")),
        };
        let weights = match field("weight") {
            Some((k, v)) => {
                let weights = self.weights_of(k, v)?;
                if weights.len() != sources.len() {
                    return Err(self.bad(
                        k,
                        &format!(
                            "{} weights for {} scripts: give one per script",
                            weights.len(),
                            sources.len()
                        ),
                    ));
                }
                weights
            }
            None => vec![1; sources.len()],
        };
        if let (Some((k, _)), true) = (field("weight"), weights.iter().sum::<i64>() == 0) {
            return Err(self.bad(k, "the total weight of the scenario's scripts is zero"));
        }
        let clients = match field("clients") {
            Some((k, v)) => Some(self.count_of(k, v)?),
            None if field("client_stages").is_some() => None,
            None => return Err(self.missing(line, index, "clients")),
        };
        let threads = field("threads")
            .map(|(k, v)| {
                let n = self.count_of(k, v)?;
                match clients {
                    Some(c) if n > c => Err(self.bad(
                        k,
                        &format!("{n} threads for {c} clients: at most one per client"),
                    )),
                    _ => Ok(n),
                }
            })
            .transpose()?;
        let rate = field("rate").map(|(k, v)| self.rate_of(k, v)).transpose()?;
        let stages = |key: &str| {
            field(key)
                .map(|(k, v)| Ok((self.text_of(k, v)?, self.line(&k.span()))))
                .transpose()
        };
        Ok(ScenarioSpec {
            key_lines: table
                .iter()
                .map(|(k, _)| (k.get_ref().to_string(), self.line(&k.span())))
                .collect(),
            line,
            scripts: sources
                .into_iter()
                .zip(weights)
                .map(|(source, weight)| ScriptSpec { source, weight })
                .collect(),
            clients,
            threads,
            rate,
            conninfo: field("conninfo")
                .map(|(k, v)| self.text_of(k, v))
                .transpose()?,
            rate_stages: stages("rate_stages")?,
            client_stages: stages("client_stages")?,
            name,
        })
    }

    fn missing(&self, line: usize, index: usize, key: &'static str) -> ScenarioError {
        ScenarioError::Missing {
            path: self.path.to_string(),
            line,
            index,
            key,
        }
    }

    /// A non-empty string.
    fn text_of(&self, k: &Key<'_>, v: &Value<'_>) -> Result<String, ScenarioError> {
        match v.get_ref() {
            DeValue::String(s) if !s.trim().is_empty() => Ok(s.to_string()),
            DeValue::String(_) => Err(self.bad(k, "must not be empty")),
            other => Err(self.bad(k, &format!("expected a string, got {}", shown(other)))),
        }
    }

    /// A string, or an array of them.
    fn texts_of(&self, k: &Key<'_>, v: &Value<'_>) -> Result<Vec<String>, ScenarioError> {
        match v.get_ref() {
            DeValue::Array(items) if items.iter().next().is_some() => {
                items.iter().map(|item| self.text_of(k, item)).collect()
            }
            DeValue::Array(_) => Err(self.bad(k, "names no script")),
            _ => Ok(vec![self.text_of(k, v)?]),
        }
    }

    /// A weight (pgbench's `@W`: 0 to i32::MAX), or an array of them.
    fn weights_of(&self, k: &Key<'_>, v: &Value<'_>) -> Result<Vec<i64>, ScenarioError> {
        let one = |v: &Value<'_>| match integer(v.get_ref()) {
            Some(w) if (0..=i64::from(i32::MAX)).contains(&w) => Ok(w),
            _ => Err(self.bad(
                k,
                &format!(
                    "expected a weight from 0 to {}, got {}",
                    i32::MAX,
                    shown(v.get_ref())
                ),
            )),
        };
        match v.get_ref() {
            DeValue::Array(items) => items.iter().map(one).collect(),
            _ => Ok(vec![one(v)?]),
        }
    }

    /// A positive count of clients or threads (pgbench's `int`).
    fn count_of(&self, k: &Key<'_>, v: &Value<'_>) -> Result<usize, ScenarioError> {
        match integer(v.get_ref()) {
            Some(n) if (1..=i64::from(i32::MAX)).contains(&n) => Ok(n as usize),
            _ => Err(self.bad(
                k,
                &format!("expected a positive integer, got {}", shown(v.get_ref())),
            )),
        }
    }

    /// A positive rate, integer or float.
    fn rate_of(&self, k: &Key<'_>, v: &Value<'_>) -> Result<f64, ScenarioError> {
        let rate = match v.get_ref() {
            DeValue::Float(f) => f.as_str().parse::<f64>().ok(),
            other => integer(other).map(|n| n as f64),
        };
        match rate {
            Some(r) if r > 0.0 && r.is_finite() => Ok(r),
            _ => Err(self.bad(
                k,
                &format!(
                    "expected a positive number of transactions per second, got {}",
                    shown(v.get_ref())
                ),
            )),
        }
    }
}

/// An integer value, if it is one that fits.
fn integer(v: &DeValue<'_>) -> Option<i64> {
    match v {
        DeValue::Integer(i) => i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok(),
        _ => None,
    }
}

/// A value as the errors show it.
fn shown(v: &DeValue<'_>) -> String {
    match v {
        DeValue::String(s) => format!("\"{s}\""),
        DeValue::Integer(i) => i.to_string(),
        DeValue::Float(f) => f.to_string(),
        DeValue::Boolean(b) => b.to_string(),
        DeValue::Datetime(d) => d.to_string(),
        DeValue::Array(_) => "an array".to_string(),
        DeValue::Table(_) => "a table".to_string(),
    }
}

#[cfg(test)]
mod tests;
