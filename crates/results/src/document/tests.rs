//! The results file: every mode's document validates against docs/results.schema.json,
//! reads back equal, and renders the run's report byte for byte.

use super::*;
use crate::report::render;
use crate::synthetic::{every_mode, run, Spec};

fn meta() -> RunMeta {
    let mut options = BTreeMap::new();
    options.insert("client".to_string(), serde_json::json!(4));
    options.insert(
        "file".to_string(),
        serde_json::json!(["a.sql@3", "b.sql@1"]),
    );
    RunMeta {
        command_line: vec!["pgbench-rs".into(), "-c".into(), "4".into()],
        options,
        random_seed: 12_345_678_901_234_567_890,
        server_version: Some("15.18 (Debian 15.18-0+deb12u1)".into()),
        server_settings: [("shared_buffers", "128MB"), ("fsync", "on")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
        started_unix_us: 1_764_578_627_123_456,
        ended_unix_us: 1_764_578_637_000_001,
        worker: None,
    }
}

pub(crate) fn validator() -> jsonschema::Validator {
    let text = include_str!("../../../../docs/results.schema.json");
    let schema: serde_json::Value = serde_json::from_str(text).expect("schema is JSON");
    jsonschema::draft202012::new(&schema).expect("schema is a valid draft 2020-12 schema")
}

pub(crate) fn assert_valid(v: &jsonschema::Validator, what: &str, json: &str) {
    let value: serde_json::Value = serde_json::from_str(json).unwrap();
    let errors: Vec<String> = v
        .iter_errors(&value)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{what}: {errors:#?}");
}

#[test]
fn every_mode_validates_reads_back_equal_and_shows_the_same_report() {
    let v = validator();
    for (mode, spec) in every_mode() {
        let result = run(&spec);
        let report = render(&result);
        let doc = ResultsFile::from_run(result, meta());
        let json = doc.to_json();
        assert_valid(&v, mode, &json);
        let back = ResultsFile::from_json(&json).unwrap_or_else(|e| panic!("{mode}: {e}"));
        assert_eq!(back, doc, "{mode}");
        assert_eq!(render(back.run.as_ref().unwrap()), report, "{mode}");
        // A lone script's histogram is the run's, written once; several have theirs.
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let scripts = value["run"]["scripts"].as_array().unwrap();
        let stored = scripts.iter().filter(|s| s.get("histogram").is_some());
        assert_eq!(
            stored.count(),
            scripts.len() - usize::from(scripts.len() == 1)
        );
    }
}

#[test]
fn summary_holds_the_figures_the_report_prints() {
    let mut spec = Spec::tpcb(3, 4, 200.0, 1500.0);
    spec.settings.rate = Some(200.0);
    spec.settings.latency_limit_us = Some(2000);
    let r = run(&spec);
    let text = render(&r);
    let s = Summary::from_run(&r);
    let line = |prefix: &str| {
        text.lines()
            .find(|l| l.starts_with(prefix))
            .unwrap_or_else(|| panic!("no {prefix} in {text}"))
            .to_string()
    };
    assert_eq!(
        line("tps = "),
        format!(
            "tps = {:.6} (without initial connection time)",
            s.tps.unwrap()
        )
    );
    assert_eq!(
        line("latency average"),
        format!("latency average = {:.3} ms", s.latency_avg_ms.unwrap())
    );
    assert_eq!(
        line("rate limit schedule lag"),
        format!(
            "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
            s.lag_avg_ms.unwrap(),
            s.lag_max_ms.unwrap()
        )
    );
    assert!(line("number of transactions above").contains(&format!(": {}/", s.late.unwrap())));
    assert!(!s.latency_avg_derived);
    assert_eq!(
        s.percentiles.as_ref().unwrap().count,
        r.total.counts.cnt as u64
    );
}

#[test]
fn metadata_and_host_are_filled() {
    let doc = ResultsFile::from_run(run(&Spec::tpcb(1, 2, 50.0, 1000.0)), meta());
    assert_eq!(
        doc.started_at.as_deref(),
        Some("2025-12-01T08:43:47.123456Z")
    );
    assert_eq!(doc.ended_at.as_deref(), Some("2025-12-01T08:43:57.000001Z"));
    let host = doc.client_host.as_ref().unwrap();
    assert!(host.cores.unwrap() >= 1);
    assert!(host.hostname.is_some() && host.os.is_some());
    assert_eq!(doc.random_seed, Some(12_345_678_901_234_567_890));
    assert_eq!(doc.timeline().unwrap().points.len(), 2);
    // Stored once: in `run`, not again at the top level.
    let json: serde_json::Value = serde_json::from_str(&doc.to_json()).unwrap();
    assert_eq!((json.get("histogram"), json.get("timeline")), (None, None));
    assert!(json["run"]["histogram"].is_string());
    assert_eq!(json["run"]["scripts"][0].get("histogram"), None);
    assert_eq!(
        doc.histogram(),
        doc.run.as_ref().unwrap().histogram.as_ref()
    );
}

/// A schema 2 file (`tests/data/v2/run.json`, written by pgbench-rs at 7b4f84e:
/// `pgbench-rs -c 2 -j 2 -T 3 -P 1 --random-seed=7 --latency-percentiles=50,99
/// --export-json=run.json` against a scale 1 database; `stdout` is what the run
/// printed) reads as it did: the report byte for byte, its seconds under their old
/// names, the histogram and timeline from its `run`; written again, it is schema 4
/// with none of the copies.
#[test]
fn a_schema_2_file_reads_and_writes_back_as_schema_4() {
    let text = include_str!("../../tests/data/v2/run.json");
    let stdout = include_str!("../../tests/data/v2/stdout");
    assert!(text.contains("\"schema\": 2") && text.contains("\"transactions\": "));
    let doc = ResultsFile::from_json(text).unwrap();
    assert_eq!(crate::show::render(&doc), stdout);
    let run = doc.run.as_ref().unwrap();
    let seconds: i64 = run.series.iter().map(|s| s.counts.cnt).sum();
    assert_eq!((run.series.len(), seconds), (3, run.total.counts.cnt));
    assert_eq!(doc.histogram().unwrap().len(), 829);
    // What the file stored beside `run`, now derived from it.
    let stored: serde_json::Value = serde_json::from_str(text).unwrap();
    let timeline = serde_json::to_value(doc.timeline().unwrap()).unwrap();
    assert_eq!(timeline, stored["timeline"]);
    assert_eq!(timeline["points"].as_array().unwrap().len(), 3);
    let mut again = doc.clone();
    again.schema = SCHEMA_VERSION;
    let json = again.to_json();
    assert_valid(&validator(), "schema 2 written again", &json);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(
        (value.get("histogram"), value.get("timeline")),
        (None, None)
    );
    assert!(value["run"]["series"][0].get("transactions").is_none());
    assert_eq!(value["run"]["scripts"][0].get("histogram"), None);
    assert_eq!(ResultsFile::from_json(&json).unwrap(), again);
}

/// A schema 3 file (`tests/data/v3/run.json`, written by pgbench-rs at 2607105 with
/// the command line of the schema 2 one; `stdout` is what the run printed) stored the
/// lone script's histogram twice. It reads as it did, and written again as schema 4
/// (the histogram once) it reads back to the same model: its script still has the
/// run's histogram, for `show`'s percentiles, `merge`, `compare` and `html`.
#[test]
fn a_schema_3_file_and_its_schema_4_rewrite_read_the_same() {
    let text = include_str!("../../tests/data/v3/run.json");
    let stdout = include_str!("../../tests/data/v3/stdout");
    let v = validator();
    assert_valid(&v, "schema 3", text);
    let stored: serde_json::Value = serde_json::from_str(text).unwrap();
    assert_eq!(stored["schema"], 3);
    let script_histogram = &stored["run"]["scripts"][0]["histogram"];
    assert!(script_histogram.is_string());
    assert_eq!(script_histogram, &stored["run"]["histogram"]);
    let old = ResultsFile::from_json(text).unwrap();
    assert_eq!(crate::show::render(&old), stdout);
    let run = old.run.as_ref().unwrap();
    assert_eq!(run.scripts[0].histogram, run.histogram);
    assert_eq!(run.histogram.as_ref().unwrap().len(), 2658);

    let mut again = old.clone();
    again.schema = SCHEMA_VERSION;
    let json = again.to_json();
    assert_valid(&v, "schema 3 written again", &json);
    let value: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(value["run"]["scripts"][0].get("histogram"), None);
    assert_eq!(value["run"]["histogram"], stored["run"]["histogram"]);
    let new = ResultsFile::from_json(&json).unwrap();
    assert_eq!(new, again);
    assert_eq!(
        ResultsFile {
            schema: 3,
            ..new.clone()
        },
        old
    );
    assert_eq!(crate::show::render(&new), stdout);
    assert_eq!(Summary::from_run(new.run.as_ref().unwrap()), old.summary);
    // One histogram less: the base64 string and its key, about 1.3 KB of this 15 KB.
    let saved = text.len() - json.len();
    let one = script_histogram.as_str().unwrap().len();
    assert!(
        (one..one + 64).contains(&saved),
        "{saved} bytes fewer, one is {one}"
    );
}

#[test]
fn rfc3339_of_known_instants() {
    assert_eq!(rfc3339_utc(0), "1970-01-01T00:00:00.000000Z");
    assert_eq!(
        rfc3339_utc(951_782_400_000_000),
        "2000-02-29T00:00:00.000000Z"
    );
    assert_eq!(rfc3339_utc(-1), "1969-12-31T23:59:59.999999Z");
    assert_eq!(
        rfc3339_utc(4_107_542_399_500_000),
        "2100-02-28T23:59:59.500000Z"
    );
}

#[test]
fn bad_documents_say_what_is_wrong() {
    let err = |t: &str| ResultsFile::from_json(t).unwrap_err().to_string();
    assert!(err("{").starts_with("not valid JSON: "), "{}", err("{"));
    assert_eq!(
        err("{\"a\": 1}"),
        "not a pgbench-rs results file (no \"schema\" version number)"
    );
    assert_eq!(
        err("{\"schema\": 6}"),
        "results file schema version 6 is not supported (this program reads versions 1 to 5)"
    );
    assert!(err("{\"schema\": 1}").starts_with("invalid results file: missing field"));
}

#[test]
fn the_schema_rejects_what_readers_would_misread() {
    let v = validator();
    let doc = ResultsFile::from_run(run(&Spec::tpcb(2, 2, 50.0, 1000.0)), meta());
    let good: serde_json::Value = serde_json::from_str(&doc.to_json()).unwrap();
    let broken = [
        ("/summary/tps", serde_json::json!("fast")),
        ("/schema", serde_json::json!(6)),
        (
            "/warnings",
            serde_json::json!([{"code": "made_up", "message": "", "figures": {}}]),
        ),
        ("/started_at", serde_json::json!("yesterday")),
        ("/run/histogram", serde_json::json!("AAAA")),
        ("/run/settings/limit", serde_json::json!({"forever": 1})),
    ];
    for (pointer, bad) in broken {
        let mut value = good.clone();
        *value.pointer_mut(pointer).unwrap() = bad;
        assert!(!v.is_valid(&value), "{pointer} accepted");
    }
    let mut extra = good.clone();
    extra["summary"]["tps_typo"] = serde_json::json!(1.0);
    assert!(!v.is_valid(&extra), "unknown summary field accepted");
    // A lone script's histogram: only in versions 1 to 3, and there always.
    let mut twice = good.clone();
    twice["run"]["scripts"][0]["histogram"] = good["run"]["histogram"].clone();
    assert!(
        !v.is_valid(&twice),
        "schema 4 with a lone script's histogram"
    );
    let mut once = good.clone();
    once["schema"] = serde_json::json!(3);
    assert!(
        !v.is_valid(&once),
        "schema 3 without a lone script's histogram"
    );
    twice["schema"] = serde_json::json!(3);
    assert!(v.is_valid(&twice), "schema 3 as it was written");
    // Steps came with version 5: an older file has none.
    let mut stepped = good.clone();
    stepped["steps"] =
        serde_json::json!([{"step": 1, "value": "1", "round": 1, "file": good.clone()}]);
    assert!(v.is_valid(&stepped), "schema 5 with a step");
    stepped["schema"] = serde_json::json!(4);
    assert!(!v.is_valid(&stepped), "schema 4 with steps");
}

#[test]
fn what_is_not_a_results_file_is_told_apart_from_broken_json() {
    for other in ["\"text\"", "42", "{\"a\": 1}", "{\"schema\": \"1\"}"] {
        assert!(
            matches!(
                ResultsFile::from_json(other),
                Err(DocumentError::NotResults)
            ),
            "{other}"
        );
    }
    assert!(matches!(
        ResultsFile::from_json("{\"schema\": 1,"),
        Err(DocumentError::Json(_))
    ));
    assert!(matches!(
        ResultsFile::from_json("{\"schema\": 99}"),
        Err(DocumentError::SchemaVersion { found: 99 })
    ));
    assert!(matches!(
        ResultsFile::from_json(&format!("{{\"schema\": {SCHEMA_VERSION}}}")),
        Err(DocumentError::Invalid(_))
    ));
}

/// #43: a hand-edited file's negative tps (or count, or latency) was read as a
/// figure, and a sweep whose `capacity.representative` named no step made `show`
/// print half a report. Both are refused on read, naming the field.
#[test]
fn impossible_figures_and_a_missing_representative_step_are_refused() {
    let good = ResultsFile::from_run(run(&Spec::tpcb(3, 10, 500.0, 2000.0)), meta());
    let json: serde_json::Value = serde_json::from_str(&good.to_json()).unwrap();
    assert!(ResultsFile::from_json(&good.to_json()).is_ok());
    let refused = |edit: &dyn Fn(&mut serde_json::Value)| {
        let mut v = json.clone();
        edit(&mut v);
        match ResultsFile::from_json(&v.to_string()) {
            Err(e @ DocumentError::Impossible(_)) => e.to_string(),
            other => panic!("not refused: {other:?}"),
        }
    };
    assert_eq!(
        refused(&|v| v["summary"]["tps"] = serde_json::json!(-5.0)),
        "invalid results file: summary.tps is -5: no run measures a negative tps"
    );
    assert_eq!(
        refused(&|v| v["run"]["total"]["cnt"] = serde_json::json!(-1)),
        "invalid results file: run.total.cnt is -1: no run measures a negative count"
    );
    assert!(
        refused(&|v| v["summary"]["latency_avg_ms"] = serde_json::json!(-0.5))
            .starts_with("invalid results file: summary.latency_avg_ms is -0.5:")
    );
    assert!(
        refused(&|v| v["run"]["series"][2]["latency"]["max"] = serde_json::json!(-1.0))
            .starts_with("invalid results file: run.series[2].latency.max is -1:")
    );

    // A sweep of one step whose representative is step 7.
    let mut sweep = json.clone();
    sweep["capacity"] = serde_json::json!({
        "kind": "sweep", "parameter": "clients", "values": ["4"], "repeat": 1,
        "representative": 7
    });
    sweep["steps"] =
        serde_json::json!([{"step": 1, "value": "4", "round": 1, "file": json.clone()}]);
    let e = ResultsFile::from_json(&sweep.to_string()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "invalid results file: capacity.representative is 7, but the file has no step 7 (its steps: 1): the file was edited or cut short"
    );
    sweep["capacity"]["representative"] = serde_json::json!(1);
    assert!(ResultsFile::from_json(&sweep.to_string()).is_ok());
    // A step's own figures are held to the same rules, named by their path.
    sweep["steps"][0]["file"]["summary"]["transactions"] = serde_json::json!(-3);
    assert_eq!(
        ResultsFile::from_json(&sweep.to_string()).unwrap_err().to_string(),
        "invalid results file: steps[0].file.summary.transactions is -3: no run measures a negative count"
    );
}
