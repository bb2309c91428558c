//! `\startpipeline` .. `\endpipeline`: what goes through, the syncs read, and each rule
//! pgbench enforces with its message.

use super::meta::{recording, statements};
use super::*;

const THREE: &str =
    "\\startpipeline\nSELECT 1;\nSELECT 2;\n\\syncpipeline\nSELECT 3;\n\\endpipeline\n";

all_drives!(a_pipeline_sends_all_and_reads_every_sync, |drive| {
    for mode in ["extended", "prepared"] {
        let (server, seen) = recording(|_| None);
        let ran = Bench::new(&["-t", "3", "-M", mode], THREE).run(&server, drive);
        ran.assert_succeeded(3);
        let sent = statements(&seen);
        assert_eq!(sent.len(), 9, "{mode}: {sent:?}");
        assert_eq!(sent[..3], ["SELECT 1;", "SELECT 2;", "SELECT 3;"], "{mode}");
    }
});

/// Runs `script` once against a usual server and returns its abort.
fn abort_of(args: &[&str], script: &str, drive: Drive) -> String {
    let mut all = vec!["-t", "1"];
    all.extend_from_slice(args);
    let ran = Bench::new(&all, script).run(&usual_server(), drive);
    assert!(ran.records.is_empty(), "{:?}", ran.records);
    ran.abort().to_string()
}

#[test]
fn the_simple_protocol_has_no_pipeline() {
    assert_eq!(
        abort_of(&["-M", "simple"], THREE, Drive::Alone),
        "client 0 aborted in command 0 (startpipeline) of script 0; \
         cannot use pipeline mode with the simple query protocol"
    );
}

all_drives!(pipeline_rules_abort_with_pgbench_messages, |drive| {
    let ext = ["-M", "extended"];
    for (script, message) in [
        (
            "\\startpipeline\n\\startpipeline\n\\endpipeline\n",
            "client 0 aborted in command 1 (startpipeline) of script 0; already in pipeline mode",
        ),
        (
            "SELECT 1;\n\\endpipeline\n",
            "client 0 aborted in command 1 (endpipeline) of script 0; not in pipeline mode",
        ),
        (
            "\\syncpipeline\n",
            "client 0 aborted in command 0 (syncpipeline) of script 0; not in pipeline mode",
        ),
        (
            "\\startpipeline\nSELECT 1 \\gset\n\\endpipeline\n",
            "client 0 aborted in command 1 (gset) of script 0; \\gset is not allowed in pipeline mode",
        ),
        (
            "\\startpipeline\nSELECT 1 \\aset\n\\endpipeline\n",
            "client 0 aborted in command 1 (aset) of script 0; \\aset is not allowed in pipeline mode",
        ),
        (
            "\\startpipeline\nSELECT 1;\n",
            "client 0 aborted: end of script reached with pipeline open",
        ),
    ] {
        assert_eq!(abort_of(&ext, script, drive), message, "{script}");
    }
});

all_drives!(
    an_error_inside_a_pipeline_aborts_naming_the_query,
    |drive| {
        let server = FakeServer::answering(|r: &Request| match r.sql.as_str() {
            "INSERT 2;" => Reply::error(
                "23505",
                "duplicate key value violates unique constraint \"k\"",
            ),
            sql => Reply::usual(sql),
        });
        let script = "\\startpipeline\nINSERT 1;\nINSERT 2;\nINSERT 3;\n\\endpipeline\n";
        let ran = Bench::new(&["-t", "2", "-M", "extended"], script).run(&server, drive);
        assert!(ran.records.is_empty(), "{:?}", ran.records);
        assert_eq!(
            ran.abort(),
            "client 0 script 0 aborted in command 4 query 1: \
         ERROR:  duplicate key value violates unique constraint \"k\""
        );
    }
);
// Found by this test: after an error inside a pipeline the client read one sync too
// few before leaving pipeline mode, and aborted with "failed to exit pipeline mode for
// rolling back the failed transaction" where stock pgbench 15.18 retries (checked on
// a real server with a `DO` block raising 40001 every other call).
all_drives!(
    a_serialization_failure_inside_a_pipeline_is_retried,
    |drive| {
        // The second statement fails on the first connection's first try only.
        let server = FakeServer::answering(|r: &Request| match (r.sql.as_str(), r.number) {
            ("UPDATE 2;", 1) => Reply::error("40001", "could not serialize access"),
            (sql, _) => Reply::usual(sql),
        });
        let script = "\\startpipeline\nBEGIN;\nUPDATE 2;\nEND;\n\\endpipeline\n";
        let ran =
            Bench::new(&["-t", "2", "-M", "extended", "--max-tries=2"], script).run(&server, drive);
        ran.assert_succeeded(2);
        assert_eq!(ran.tries(), [2, 1]);
    }
);

all_drives!(a_failure_after_a_syncpipeline_is_retried_too, |drive| {
    // Fails once, in the second group of the pipeline (after the first sync was read).
    let server = FakeServer::answering(|r: &Request| match (r.sql.as_str(), r.number) {
        ("UPDATE 2;", 2) => Reply::error("40P01", "deadlock detected"),
        (sql, _) => Reply::usual(sql),
    });
    let script =
        "\\startpipeline\nSELECT 1;\n\\syncpipeline\nBEGIN;\nUPDATE 2;\nEND;\n\\endpipeline\n";
    let ran =
        Bench::new(&["-t", "2", "-M", "prepared", "--max-tries=2"], script).run(&server, drive);
    ran.assert_succeeded(2);
    assert_eq!(ran.tries(), [2, 1]);
});
