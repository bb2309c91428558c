//! Meta-commands as the server sees their effect: `\set` values as parameters and
//! text, `\sleep` on the test clock, `\setshell`/`\shell`, `\if` chains, `\gset` and
//! `\aset` storing what a query returned.

use super::*;
use std::sync::Mutex;

/// A server answering as usual (or as `respond` says) that keeps every request.
pub fn recording(
    respond: impl Fn(&Request) -> Option<Reply> + Send + Sync + 'static,
) -> (FakeServer, Arc<Mutex<Vec<Request>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    let server = FakeServer::answering(move |r: &Request| {
        log.lock().unwrap().push(r.clone());
        respond(r).unwrap_or_else(|| Reply::usual(&r.sql))
    });
    (server, seen)
}

/// The statements' texts with their parameters, as `TEXT [p1, p2]`.
pub fn statements(seen: &Mutex<Vec<Request>>) -> Vec<String> {
    seen.lock()
        .unwrap()
        .iter()
        .map(|r| {
            let params: Vec<&str> = r
                .params
                .iter()
                .map(|p| p.as_deref().unwrap_or("NULL"))
                .collect();
            if params.is_empty() {
                r.sql.clone()
            } else {
                format!("{} [{}]", r.sql, params.join(", "))
            }
        })
        .collect()
}

all_drives!(
    set_values_reach_the_server_as_text_and_as_parameters,
    |drive| {
        let script = "\\set a 5 * 2 + 1\n\\set b :a / 2.0\nSELECT :a, :b, :undefined_stays;\n";
        for (mode, expected) in [
            ("simple", "SELECT 11, 5.5, :undefined_stays;"),
            ("extended", "SELECT $1, $2, $3; [11, 5.5, NULL]"),
        ] {
            let (server, seen) = recording(|_| None);
            let ran = Bench::new(&["-t", "2", "-M", mode], script).run(&server, drive);
            ran.assert_succeeded(2);
            assert_eq!(statements(&seen), [expected, expected], "{mode}");
        }
    }
);

all_drives!(
    sleep_waits_on_the_run_clock_and_counts_in_the_latency,
    |drive| {
        let bench = Bench::new(
            &["-t", "3"],
            "\\set d 2\n\\sleep :d ms\n\\sleep 500 us\nSELECT 1;\n",
        );
        let ran = bench.run(&usual_server(), drive);
        ran.assert_succeeded(3);
        // Only the sleeps move the test clock: 2.5 ms each transaction.
        for r in &ran.records {
            assert_eq!(r.latency, 2_500.0, "{r:?}");
        }
        assert_eq!(bench.clock.now_us(), START_US + 3 * 2_500);
    }
);

#[test]
fn sleep_on_a_variable_that_is_not_a_number_aborts_with_pgbench_words() {
    let ran = Bench::new(&["-t", "1", "-D", "d=soon"], "\\sleep :d\nSELECT 1;\n")
        .run(&usual_server(), Drive::Alone);
    assert_eq!(
        ran.abort(),
        "sleep: invalid sleep time \"soon\" for variable \"d\"\n\
         client 0 aborted in command 0 (sleep) of script 0; execution of meta-command failed"
    );
    assert!(ran.records.is_empty());
}

#[test]
fn setshell_stores_the_integer_a_command_prints_and_shell_runs_one() {
    let (server, seen) = recording(|_| None);
    let script = "\\setshell x echo 41\n\\set y :x + 1\n\\shell true\nSELECT :y;\n";
    let ran = Bench::new(&["-t", "1"], script).run(&server, Drive::Alone);
    ran.assert_succeeded(1);
    assert_eq!(statements(&seen), ["SELECT 42;"]);
}

#[test]
fn a_failing_shell_command_aborts_the_client() {
    let ran =
        Bench::new(&["-t", "1"], "\\shell false\nSELECT 1;\n").run(&usual_server(), Drive::Alone);
    assert_eq!(
        ran.abort(),
        "false: could not launch shell command\n\
         client 0 aborted in command 0 (shell) of script 0; execution of meta-command failed"
    );
    let ran =
        Bench::new(&["-t", "1"], "\\setshell v echo nine\n").run(&usual_server(), Drive::Alone);
    assert_eq!(
        ran.abort(),
        "echo: shell command must return an integer (not \"nine\n\")\n\
         client 0 aborted in command 0 (setshell) of script 0; execution of meta-command failed"
    );
}

all_drives!(if_elif_else_run_only_the_branch_taken, |drive| {
    let script = "\\set n random(1, 3)\n\
                  \\if :n = 1\nSELECT 'one';\n\
                  \\elif :n = 2\nSELECT 'two';\n\
                  \\else\nSELECT 'three';\n\\endif\n\
                  SELECT :n;\n";
    let (server, seen) = recording(|_| None);
    let ran = Bench::new(&["-t", "12"], script).run(&server, drive);
    assert_eq!(ran.count(TxOutcome::Success), 12);
    let sent = statements(&seen);
    assert_eq!(sent.len(), 24, "{sent:?}");
    for pair in sent.chunks(2) {
        let word = match pair[1].as_str() {
            "SELECT 1;" => "one",
            "SELECT 2;" => "two",
            "SELECT 3;" => "three",
            other => panic!("{other}"),
        };
        assert_eq!(pair[0], format!("SELECT '{word}';"));
    }
    // Twelve draws of 1..3 from seed 1 take more than one branch.
    assert!(sent.iter().step_by(2).any(|s| s != &sent[0]), "{sent:?}");
});

all_drives!(gset_and_aset_store_what_the_query_returned, |drive| {
    let (server, seen) = recording(|r| match r.sql.trim() {
        "SELECT two" => Some(Reply::row(&["a", "b"], &["1", "2"])),
        "SELECT many" => Some(Reply::Rows {
            columns: vec!["c".into()],
            rows: vec![vec![Some("7".into())], vec![Some("8".into())]],
        }),
        _ => None,
    });
    let script = "SELECT two \\gset p_\nSELECT many \\aset\nSELECT :p_a + :p_b + :c;\n";
    let ran = Bench::new(&["-t", "1"], script).run(&server, drive);
    ran.assert_succeeded(1);
    // \aset keeps the last row.
    assert_eq!(statements(&seen)[2], "SELECT 1 + 2 + 8;");
});

#[test]
fn gset_of_anything_but_one_row_aborts_with_the_row_count() {
    for (reply, rows) in [
        (Reply::Tag("UPDATE 3".into()), 0),
        (
            Reply::Rows {
                columns: vec!["x".into()],
                rows: vec![],
            },
            0,
        ),
    ] {
        let server = FakeServer::answering(move |_| reply.clone());
        let ran = Bench::new(&["-t", "1"], "SELECT x \\gset\n").run(&server, Drive::Alone);
        assert_eq!(
            ran.abort(),
            format!("client 0 script 0 command 0 query 0: expected one row, got {rows}")
        );
    }
}

all_drives!(
    scripts_are_chosen_by_weight_from_the_thread_random_state,
    |drive| {
        let run = || {
            Bench::scripts(
                &["-t", "40", "-f", "a.sql@1", "-f", "b.sql@3"],
                &[("a.sql", "SELECT 'a';\n"), ("b.sql", "SELECT 'b';\n")],
            )
            .run(&usual_server(), drive)
        };
        let ran = run();
        ran.assert_succeeded(40);
        let picks: Vec<u32> = ran.records.iter().map(|r| r.script).collect();
        let b = picks.iter().filter(|&&s| s == 1).count();
        // About three in four are b.sql; the same seed picks the same sequence.
        assert!((20..40).contains(&b), "{picks:?}");
        let again: Vec<u32> = run().records.iter().map(|r| r.script).collect();
        assert_eq!(again, picks);
    }
);

#[test]
fn gset_into_an_invalid_name_aborts_storing_into_it() {
    let server = FakeServer::answering(|r: &Request| match r.sql.trim() {
        "SELECT odd" => Reply::row(&["1st"], &["x"]),
        sql => Reply::usual(sql),
    });
    let ran = Bench::new(&["-t", "1"], "SELECT odd \\gset\n").run(&server, Drive::Alone);
    assert_eq!(
        ran.abort(),
        "gset: invalid variable name: \"1st\"\n\
         client 0 script 0 command 0 query 0: error storing into variable 1st"
    );
}

#[test]
fn aset_of_no_rows_sets_nothing_and_goes_on() {
    let (server, seen) = recording(|r| {
        (r.sql.trim() == "SELECT none").then(|| Reply::Rows {
            columns: vec!["v".into()],
            rows: vec![],
        })
    });
    let script = "\\set v 5\nSELECT none \\aset\nSELECT :v;\n";
    let ran = Bench::new(&["-t", "1"], script).run(&server, Drive::Alone);
    ran.assert_succeeded(1);
    assert_eq!(statements(&seen)[1], "SELECT 5;");
}
