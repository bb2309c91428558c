//! The query API against the shared cluster: the three query modes with text
//! parameters, results, pipelines, COPY, server errors, notices, cancel and a lost
//! connection.

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{shared_conn, socket_args, Env};
use pgbench_wire::{Connection, DbError, PipelineStatus, ResultStatus, TransactionStatus};

/// Collects the results of one request (until `get_result` gives `None`).
fn results(conn: &mut Connection) -> Vec<ResultStatus> {
    let mut out = Vec::new();
    while let Some(r) = conn.get_result().expect("get_result") {
        out.push(r);
    }
    out
}

fn last_row(conn: &Connection) -> Vec<Option<String>> {
    (0..conn.nfields())
        .map(|i| {
            conn.last_row_value(i)
                .map(|v| String::from_utf8_lossy(v).into_owned())
        })
        .collect()
}

const TYPED: &str = "select $1::int + 1 as i, $2::text || '!' as t, $3::int is null as n, \
                     $4::numeric * 2 as num, $5::date + 1 as d";

fn typed_params() -> Vec<Option<&'static [u8]>> {
    vec![
        Some(b"41".as_slice()),
        Some(b"hi".as_slice()),
        None,
        Some(b"1.25".as_slice()),
        Some(b"2024-02-28".as_slice()),
    ]
}

fn expected_typed_row() -> Vec<Option<String>> {
    ["42", "hi!", "t", "2.50", "2024-02-29"]
        .iter()
        .map(|s| Some(s.to_string()))
        .collect()
}

#[test]
fn simple_query_gives_one_result_per_statement() {
    let mut conn = shared_conn("wire_simple");
    conn.send_query(
        "select 1 as a, null::text as b; create temp table t(x int); ; select 'x' where false",
    )
    .unwrap();
    let r = conn.get_result().unwrap();
    assert_eq!(r, Some(ResultStatus::TuplesOk));
    assert_eq!(conn.nfields(), 2);
    assert_eq!(conn.field_name(0), "a");
    assert_eq!(conn.field_name(1), "b");
    assert_eq!(conn.ntuples(), 1);
    assert_eq!(conn.last_row_value(0), Some(b"1".as_slice()));
    assert_eq!(conn.last_row_value(1), None);
    assert!(conn.last_row_is_null(1));
    assert_eq!(conn.command_tag(), "SELECT 1");
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::CommandOk));
    assert_eq!(conn.command_tag(), "CREATE TABLE");
    assert_eq!(conn.nfields(), 0);
    // The empty statement between two semicolons produces no result of its own in a
    // multi-statement string; the last select returns zero rows.
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
    assert_eq!(conn.ntuples(), 0);
    assert_eq!(conn.last_row_value(0), None);
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);

    conn.send_query("").unwrap();
    assert_eq!(results(&mut conn), vec![ResultStatus::EmptyQuery]);
}

#[test]
fn extended_query_with_text_parameters_of_several_types() {
    let mut conn = shared_conn("wire_extended");
    conn.send_query_params(TYPED, &typed_params()).unwrap();
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
    assert_eq!(last_row(&conn), expected_typed_row());
    assert_eq!(conn.field_name(3), "num");
    assert_eq!(conn.get_result().unwrap(), None);
}

#[test]
fn prepared_statement_with_text_parameters() {
    let mut conn = shared_conn("wire_prepared");
    conn.send_prepare("P_0", TYPED, 5).unwrap();
    assert_eq!(results(&mut conn), vec![ResultStatus::CommandOk]);
    for _ in 0..3 {
        conn.send_query_prepared("P_0", &typed_params()).unwrap();
        assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
        assert_eq!(last_row(&conn), expected_typed_row());
        assert_eq!(conn.get_result().unwrap(), None);
    }
    // Many rows: only the last is kept.
    conn.send_query_params("select g from generate_series(1, 1000) g", &[])
        .unwrap();
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
    assert_eq!(conn.ntuples(), 1000);
    assert_eq!(conn.last_row_value(0), Some(b"1000".as_slice()));
    assert_eq!(conn.get_result().unwrap(), None);
}

#[test]
fn sending_while_busy_is_refused() {
    let mut conn = shared_conn("wire_busy");
    conn.send_query("select 1").unwrap();
    let e = conn.send_query("select 2").unwrap_err();
    assert_eq!(e.to_string(), "another command is already in progress");
    assert_eq!(conn.transaction_status(), TransactionStatus::Active);
    assert_eq!(results(&mut conn), vec![ResultStatus::TuplesOk]);
}

#[test]
fn pipeline_with_two_syncs() {
    let mut conn = shared_conn("wire_pipeline");
    conn.execute("create table p(x int)").unwrap();
    conn.enter_pipeline_mode().unwrap();
    assert_eq!(conn.pipeline_status(), PipelineStatus::On);
    conn.send_query_params("insert into p values ($1)", &[Some(b"1".as_slice())])
        .unwrap();
    conn.send_query_params("select count(*) from p", &[])
        .unwrap();
    conn.pipeline_sync().unwrap();
    conn.send_prepare("ins", "insert into p values ($1)", 1)
        .unwrap();
    conn.send_query_prepared("ins", &[Some(b"2".as_slice())])
        .unwrap();
    conn.send_query_params("select sum(x) from p", &[]).unwrap();
    conn.send_pipeline_sync().unwrap();
    conn.flush().unwrap();

    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::CommandOk));
    assert_eq!(conn.command_tag(), "INSERT 0 1");
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
    assert_eq!(conn.last_row_value(0), Some(b"1".as_slice()));
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::PipelineSync));
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::CommandOk));
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::CommandOk));
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
    assert_eq!(conn.last_row_value(0), Some(b"3".as_slice()));
    assert_eq!(conn.get_result().unwrap(), None);
    assert!(
        conn.exit_pipeline_mode().is_err(),
        "sync result not read yet"
    );
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::PipelineSync));
    assert_eq!(conn.get_result().unwrap(), None);
    conn.exit_pipeline_mode().unwrap();
    assert_eq!(conn.pipeline_status(), PipelineStatus::Off);
    assert_eq!(
        conn.query_rows("select count(*) from p").unwrap()[0][0].as_deref(),
        Some("2")
    );
}

#[test]
fn pipeline_error_aborts_until_sync() {
    let mut conn = shared_conn("wire_pipeline_err");
    conn.enter_pipeline_mode().unwrap();
    conn.send_query_params("select 1/0", &[]).unwrap();
    conn.send_query_params("select 1", &[]).unwrap();
    conn.pipeline_sync().unwrap();
    conn.send_query_params("select 2", &[]).unwrap();
    conn.pipeline_sync().unwrap();
    match conn.get_result().unwrap() {
        Some(ResultStatus::Error(e)) => assert_eq!(e.code(), "22012"),
        other => panic!("expected an error, got {other:?}"),
    }
    assert_eq!(conn.pipeline_status(), PipelineStatus::Aborted);
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(
        conn.get_result().unwrap(),
        Some(ResultStatus::PipelineAborted)
    );
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::PipelineSync));
    assert_eq!(conn.pipeline_status(), PipelineStatus::On);
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
    assert_eq!(conn.last_row_value(0), Some(b"2".as_slice()));
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::PipelineSync));
    assert_eq!(conn.get_result().unwrap(), None);
    conn.exit_pipeline_mode().unwrap();
}

#[test]
fn copy_in_loads_rows() {
    let mut conn = shared_conn("wire_copy");
    conn.execute("create table c(a int, b text)").unwrap();
    let mut copy = conn.copy_in("copy c from stdin").unwrap();
    for i in 0..100_000 {
        copy.write(format!("{i}\tv{i}\n").as_bytes()).unwrap();
    }
    assert_eq!(copy.finish().unwrap(), 100_000);
    let rows = conn.query_rows("select count(*), max(b) from c").unwrap();
    assert_eq!(
        rows,
        vec![vec![Some("100000".into()), Some("v99999".into())]]
    );

    // Bad data: the server's error comes back from finish().
    let mut copy = conn.copy_in("copy c from stdin").unwrap();
    copy.write(b"x\ty\n").unwrap();
    let e = copy.finish().unwrap_err();
    assert_eq!(e.db_error().unwrap().code(), "22P02");
    // Dropping an unfinished COPY aborts it and leaves the connection usable.
    let copy = conn.copy_in("copy c from stdin").unwrap();
    drop(copy);
    assert_eq!(
        conn.query_rows("select 7").unwrap()[0][0].as_deref(),
        Some("7")
    );
}

#[test]
fn copy_in_a_script_is_detectable_and_can_be_left() {
    let mut conn = shared_conn("wire_copy_script");
    conn.execute("create table c(a int)").unwrap();
    for extended in [false, true] {
        if extended {
            conn.send_query_params("copy c from stdin", &[]).unwrap();
        } else {
            conn.send_query("copy c from stdin").unwrap();
        }
        assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::CopyIn));
        conn.end_copy().unwrap();
        let rest = results(&mut conn);
        assert_eq!(rest, vec![ResultStatus::CommandOk]);
    }
    conn.send_query("copy (select 1) to stdout").unwrap();
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::CopyOut));
    conn.end_copy().unwrap();
    assert_eq!(results(&mut conn), vec![ResultStatus::CommandOk]);
    assert_eq!(conn.query_rows("select 1").unwrap().len(), 1);
}

#[test]
fn server_error_fields_and_libpq_text() {
    let mut conn = shared_conn("wire_errors");
    conn.send_query("select * from nosuch where x = 1;")
        .unwrap();
    let err = match conn.get_result().unwrap() {
        Some(ResultStatus::Error(e)) => e,
        other => panic!("expected an error, got {other:?}"),
    };
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(err.code(), "42P01");
    assert_eq!(err.severity, "ERROR");
    assert_eq!(err.message, "relation \"nosuch\" does not exist");
    assert_eq!(err.position, Some(15));
    // What stock pgbench prints after "...aborted in command 0 query 0: ".
    assert_eq!(
        err.to_string(),
        "ERROR:  relation \"nosuch\" does not exist\nLINE 1: select * from nosuch where x = 1;\n                      ^"
    );

    let raise = "do $$ begin raise exception 'boom' using detail = 'det', hint = 'hnt', errcode = '40001'; end $$";
    for mode in 0..3 {
        match mode {
            0 => conn.send_query(raise).unwrap(),
            1 => conn.send_query_params(raise, &[]).unwrap(),
            _ => {
                conn.send_prepare("r", raise, 0).unwrap();
                assert_eq!(results(&mut conn), vec![ResultStatus::CommandOk]);
                conn.send_query_prepared("r", &[]).unwrap();
            }
        }
        let err = match conn.get_result().unwrap() {
            Some(ResultStatus::Error(e)) => e,
            other => panic!("expected an error, got {other:?}"),
        };
        assert_eq!(conn.get_result().unwrap(), None);
        assert_eq!(err.code(), "40001");
        assert_eq!(err.detail.as_deref(), Some("det"));
        assert_eq!(err.hint.as_deref(), Some("hnt"));
        assert_eq!(
            err.to_string(),
            "ERROR:  boom\nDETAIL:  det\nHINT:  hnt\nCONTEXT:  PL/pgSQL function inline_code_block line 1 at RAISE"
        );
    }
    // A prepared statement's error has no query text, so no cursor (as with libpq).
    conn.send_prepare("bad", "select nosuchcol", 0).unwrap();
    let err = match conn.get_result().unwrap() {
        Some(ResultStatus::Error(e)) => e,
        other => panic!("expected an error, got {other:?}"),
    };
    assert!(
        err.to_string().contains("LINE 1: select nosuchcol"),
        "{err}"
    );
    assert_eq!(conn.get_result().unwrap(), None);

    // Transaction status follows ReadyForQuery.
    conn.execute("begin").unwrap();
    assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
    assert!(conn.execute("select 1/0").is_err());
    assert_eq!(conn.transaction_status(), TransactionStatus::InError);
    conn.execute("rollback").unwrap();
    assert_eq!(conn.transaction_status(), TransactionStatus::Idle);
}

#[test]
fn notices_go_to_the_handler() {
    let mut conn = shared_conn("wire_notices");
    let seen: Arc<Mutex<Vec<String>>> = Arc::default();
    let sink = seen.clone();
    conn.set_notice_handler(Box::new(move |n: &DbError| {
        sink.lock().unwrap().push(n.to_string())
    }));
    conn.execute("do $$ begin raise notice 'hello'; raise warning 'careful' using hint = 'h'; end $$; drop table if exists nosuch")
        .unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        vec![
            "NOTICE:  hello".to_string(),
            "WARNING:  careful\nHINT:  h".to_string(),
            "NOTICE:  table \"nosuch\" does not exist, skipping".to_string(),
        ]
    );
}

#[test]
fn parameters_and_server_version() {
    let conn = shared_conn("wire_params");
    let version = conn.parameter("server_version").unwrap();
    assert!(
        version.starts_with(|c: char| c.is_ascii_digit()),
        "{version}"
    );
    // PostgreSQL 15 does not report server_version_num: the runner computes the
    // number (src/version.rs).
    let major: i32 = version.split('.').next().unwrap().parse().unwrap();
    assert!(major >= 10, "{version}");
    assert_eq!(conn.parameter("standard_conforming_strings"), Some("on"));
    assert_eq!(conn.parameter("application_name"), Some("pgbench"));
    assert_eq!(conn.parameter("client_encoding"), Some("UTF8"));
    assert_eq!(conn.parameter("no_such_parameter"), None);
    assert!(conn.backend_pid() > 0);
}

#[test]
fn cancel_stops_a_running_query() {
    let mut conn = shared_conn("wire_cancel");
    let token = conn.cancel_token();
    conn.send_query("select pg_sleep(30)").unwrap();
    let start = Instant::now();
    let canceller = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(300));
        token.cancel()
    });
    let err = match conn.get_result().unwrap() {
        Some(ResultStatus::Error(e)) => e,
        other => panic!("expected an error, got {other:?}"),
    };
    canceller.join().unwrap().unwrap();
    assert_eq!(err.code(), "57014");
    assert_eq!(
        err.to_string(),
        "ERROR:  canceling statement due to user request"
    );
    assert_eq!(conn.get_result().unwrap(), None);
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(conn.query_rows("select 1").unwrap().len(), 1);
}

#[test]
fn lost_connection_is_an_error_not_a_hang() {
    let c = pgbench_cluster::shared();
    let db = c.fresh_database("wire_lost").unwrap();
    let mut conn = Env::new().connect(&socket_args(c, &db)).unwrap();
    let pid = conn.backend_pid();
    let mut killer = Env::new().connect(&socket_args(c, &db)).unwrap();
    killer
        .execute(&format!("select pg_terminate_backend({pid})"))
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    // The server says FATAL and closes; the result or the next call reports it.
    let outcome = conn.send_query("select 1").and_then(|_| loop {
        match conn.get_result()? {
            Some(ResultStatus::Error(e)) => assert_eq!(e.severity, "FATAL"),
            Some(other) => panic!("unexpected {other:?}"),
            None => break Ok(()),
        }
    });
    let e = outcome.expect_err("a terminated backend must be reported");
    assert!(
        e.to_string()
            .starts_with("server closed the connection unexpectedly"),
        "{e}"
    );
    assert!(conn.is_broken());
    assert_eq!(conn.transaction_status(), TransactionStatus::Unknown);
    assert_eq!(
        conn.send_query("select 1").unwrap_err().to_string(),
        "no connection to the server"
    );
}

#[test]
fn query_helpers() {
    let mut conn = shared_conn("wire_helpers");
    conn.execute("create table h(a int, b text); insert into h values (1, 'x'), (2, null)")
        .unwrap();
    let rows = conn.query_rows("select a, b from h order by a").unwrap();
    assert_eq!(
        rows,
        vec![
            vec![Some("1".into()), Some("x".into())],
            vec![Some("2".into()), None]
        ]
    );
    let e = conn.execute("insert into h values ('no')").unwrap_err();
    assert_eq!(e.db_error().unwrap().code(), "22P02");
    assert!(e
        .to_string()
        .starts_with("ERROR:  invalid input syntax for type integer: \"no\""));
    let e = conn.query_rows("select nosuch").unwrap_err();
    assert_eq!(e.db_error().unwrap().code(), "42703");
}

#[test]
fn a_huge_pipeline_does_not_deadlock() {
    // Megabytes of requests before the first read: the server's replies fill the
    // socket buffers long before all requests are written, so writing must also read.
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut conn = shared_conn("wire_huge_pipeline");
        let rows = common::long_pipeline(&mut conn, "select repeat('x', 200) || $1", 60_000);
        done_tx.send(rows).unwrap();
    });
    let rows = done_rx
        .recv_timeout(Duration::from_secs(120))
        .expect("pipeline deadlocked");
    assert_eq!(rows, 60_000);
}

#[test]
fn connections_move_between_threads_and_tokens_are_shared() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send::<Connection>();
    send_sync::<pgbench_wire::CancelToken>();
    send_sync::<pgbench_wire::ConnectOptions>();
    let conn = shared_conn("wire_threads");
    let mut conn = std::thread::spawn(move || conn).join().unwrap();
    assert_eq!(
        conn.query_rows("select 3").unwrap()[0][0].as_deref(),
        Some("3")
    );
}

/// This thread's voluntary context switches so far (Linux's count of the times it
/// blocked).
fn voluntary_switches() -> u64 {
    std::fs::read_to_string("/proc/thread-self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("voluntary_ctxt_switches:"))
        .and_then(|n| n.trim().parse().ok())
        .unwrap()
}

/// A blocking read waits in `poll` for the reply: a blocking `recv` was also woken
/// when the server read the request (it frees our send buffer) and slept again, two
/// context switches per reply where pgbench has one.
#[test]
fn a_reply_costs_the_waiting_thread_one_sleep() {
    let mut conn = shared_conn("one_sleep_per_reply");
    conn.execute("select 1").unwrap();
    let queries = 500;
    let before = voluntary_switches();
    for _ in 0..queries {
        conn.execute("select 1").unwrap();
    }
    let per_query = (voluntary_switches() - before) as f64 / queries as f64;
    assert!(
        per_query <= 1.3,
        "{per_query:.2} voluntary context switches per query"
    );
}

/// With the caller doing the socket I/O (`queue_io`, for an io_uring driver), a
/// request stays queued until the caller sends it; a read that must wait on the
/// socket by itself sends it first instead of waiting for a reply to a request that
/// was never sent. A TLS connection (not here) keeps its own I/O.
#[test]
fn a_queued_request_is_sent_before_a_read_waits_for_its_reply() {
    let mut conn = shared_conn("queued_io");
    assert!(
        !conn.queue_io(),
        "only a non-blocking socket hands its I/O over"
    );
    conn.set_nonblocking_io().unwrap();
    assert!(conn.queue_io() && conn.io_queued());
    conn.send_query("select 42 as answer").unwrap();
    assert!(conn.queued_output().starts_with(b"Q"), "queued, not sent");
    assert!(!conn.replies_buffered(1));
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
    assert_eq!(last_row(&conn), vec![Some("42".to_string())]);
    assert_eq!(conn.get_result().unwrap(), None);
    assert!(conn.queued_output().is_empty());
    // What the caller reports reaches the next read: a failed receive is that read's
    // error, after which the connection is broken.
    conn.send_query("select 1").unwrap();
    conn.received(Err(std::io::Error::from_raw_os_error(libc::EIO)));
    let e = conn.get_result().unwrap_err().to_string();
    assert_eq!(e, "could not receive data from server: Input/output error");
    assert!(conn.is_broken());
}
