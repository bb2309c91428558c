//! The history out of the store: a JSON array (each run's id, tags, indexed figures,
//! environment and whole results document) or CSV (one row per run: the indexed
//! figures and the tags, for a spreadsheet). Also the JSON that `list --json`
//! prints (without the documents).

use crate::store::{RunRow, Store};
use crate::{Filter, HistoryError};
use serde_json::{json, Value};

/// A run as `list --json` shows it: its row, tags as an object, its environment.
pub fn row_json(row: &RunRow) -> Value {
    let mut v = serde_json::to_value(row).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut v {
        map.insert(
            "environment".into(),
            serde_json::to_value(row.environment()).unwrap_or(Value::Null),
        );
    }
    v
}

/// `list --json`: an array of [`row_json`].
pub fn list_json(rows: &[RunRow]) -> String {
    let all: Vec<Value> = rows.iter().map(row_json).collect();
    let mut text = serde_json::to_string_pretty(&all).unwrap_or_default();
    text.push('\n');
    text
}

/// `export`: every selected run with its results document, newest first.
pub fn json(store: &mut Store, filter: &Filter) -> Result<String, HistoryError> {
    let mut all = Vec::new();
    for (row, document) in store.documents(filter)? {
        let mut v = row_json(&row);
        let doc: Value = serde_json::from_str(&document).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            map.insert("document".into(), doc);
        }
        all.push(v);
    }
    let mut text = serde_json::to_string_pretty(&json!(all)).unwrap_or_default();
    text.push('\n');
    Ok(text)
}

/// A CSV field, quoted when it must be (RFC 4180).
fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// The CSV header.
pub const CSV_COLUMNS: &[&str] = &[
    "id",
    "started_at",
    "workload",
    "script_digest",
    "scale",
    "clients",
    "threads",
    "duration_s",
    "tps",
    "latency_avg_ms",
    "p50_ms",
    "p95_ms",
    "p99_ms",
    "max_ms",
    "failed_pct",
    "nopm",
    "tpm",
    "qps",
    "server_version",
    "system_identifier",
    "hostname",
    "tags",
];

/// `export --csv`: the indexed figures of each selected run, newest first; tags as
/// `k=v;k=v`.
pub fn csv(rows: &[RunRow]) -> String {
    let mut out = CSV_COLUMNS.join(",");
    out.push('\n');
    let s = |v: &Option<String>| v.clone().unwrap_or_default();
    let n = |v: Option<f64>| v.map_or(String::new(), |v| v.to_string());
    let i = |v: Option<i64>| v.map_or(String::new(), |v| v.to_string());
    for r in rows {
        let f = &r.figures;
        let tags: Vec<String> = r.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let cells = [
            r.id.to_string(),
            s(&f.started_at),
            s(&f.workload),
            s(&f.script_digest),
            i(f.scale),
            i(f.clients),
            i(f.threads),
            n(f.duration_s),
            n(f.tps),
            n(f.latency_avg_ms),
            n(f.p50_ms),
            n(f.p95_ms),
            n(f.p99_ms),
            n(f.max_ms),
            n(f.failed_pct),
            n(f.nopm),
            n(f.tpm),
            n(f.qps),
            s(&f.server_version),
            s(&r.system_identifier),
            s(&r.hostname),
            tags.join(";"),
        ];
        let line: Vec<String> = cells.iter().map(|c| field(c)).collect();
        out.push_str(&line.join(","));
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn csv_fields_are_quoted_when_they_must_be() {
        assert_eq!(super::field("plain"), "plain");
        assert_eq!(super::field("a,b"), "\"a,b\"");
        assert_eq!(super::field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
