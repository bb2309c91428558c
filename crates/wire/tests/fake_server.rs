//! The connection against the fake server (`pgbench_wire::testing`): replies cut into
//! one-byte packets, an error in the middle of a pipeline, a server that drops the
//! connection. No cluster.

use pgbench_wire::testing::{FakeServer, Reply, Request, Session};
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection, ResultStatus, TransactionStatus};

fn connect(server: &FakeServer) -> Connection {
    let args = ConnectArgs {
        host: Some(server.host().into()),
        port: Some(server.port().to_string()),
        user: Some("tester".into()),
        dbname: Some("db".into()),
        ..ConnectArgs::default()
    };
    Connection::connect(&ConnectOptions::from_env_and_args(&|_| None, &args).unwrap()).unwrap()
}

#[test]
fn replies_cut_into_one_byte_packets_read_whole() {
    let server = FakeServer::start(|mut s: Session| {
        s.split_writes(1);
        if s.accept() {
            s.answer(&|r: &Request| match r.sql.as_str() {
                "SELECT 'ab', NULL" => Reply::Rows {
                    columns: vec!["a".into(), "b".into()],
                    rows: vec![vec![Some("ab".into()), None]],
                },
                sql => Reply::usual(sql),
            });
        }
    });
    let mut conn = connect(&server);
    assert_eq!(conn.parameter("server_version"), Some("15.20"));
    conn.send_query("SELECT 'ab', NULL").unwrap();
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
    assert_eq!((conn.ntuples(), conn.nfields()), (1, 2));
    assert_eq!(conn.field_name(1), "b");
    assert_eq!(conn.last_row_value(0), Some(&b"ab"[..]));
    assert_eq!(conn.last_row_value(1), None);
    assert_eq!(conn.get_result().unwrap(), None);
    conn.send_query("BEGIN").unwrap();
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::CommandOk));
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.transaction_status(), TransactionStatus::InTransaction);
}

#[test]
fn an_error_mid_pipeline_aborts_the_rest_up_to_the_sync() {
    let server = FakeServer::answering(|r: &Request| match r.sql.as_str() {
        "UPDATE b" => Reply::error("40001", "could not serialize access"),
        sql => Reply::usual(sql),
    });
    let mut conn = connect(&server);
    conn.enter_pipeline_mode().unwrap();
    for sql in ["BEGIN", "SELECT a", "UPDATE b", "SELECT c"] {
        conn.send_query_params(sql, &[]).unwrap();
    }
    conn.pipeline_sync().unwrap();
    let mut seen = Vec::new();
    loop {
        match conn.get_result().unwrap() {
            Some(ResultStatus::PipelineSync) => break,
            Some(ResultStatus::Error(e)) => seen.push(format!("error {}", e.code())),
            Some(other) => seen.push(format!("{other:?}")),
            None => {}
        }
    }
    assert_eq!(
        seen,
        ["CommandOk", "TuplesOk", "error 40001", "PipelineAborted"]
    );
    assert_eq!(conn.get_result().unwrap(), None);
    assert_eq!(conn.transaction_status(), TransactionStatus::InError);
    conn.exit_pipeline_mode().unwrap();
}

#[test]
fn a_dropped_connection_is_an_error_not_a_hang() {
    let server = FakeServer::answering(|r: &Request| match r.number {
        0 => Reply::usual(&r.sql),
        _ => Reply::Drop,
    });
    let mut conn = connect(&server);
    conn.send_query("SELECT 1").unwrap();
    assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
    assert_eq!(conn.get_result().unwrap(), None);
    conn.send_query("SELECT 2").unwrap();
    assert!(conn.get_result().is_err());
    assert!(conn.is_broken());
}

/// A result of many rows, whole or cut into packets of 7 bytes (rows then arrive
/// split across reads): every row is counted and the last one kept, as libpq's
/// `PQntuples` and `PQgetvalue(res, n - 1, ...)` give them; `query_rows` gets them all.
#[test]
fn many_rows_are_all_counted_and_the_last_kept_however_they_arrive() {
    let rows: Vec<Vec<Option<String>>> = (1..=300)
        .map(|i| {
            vec![
                Some(format!("{i:0>120}")),
                (i % 2 == 0).then(|| i.to_string()),
            ]
        })
        .collect();
    for split in [None, Some(7)] {
        let sent = rows.clone();
        let server = FakeServer::start(move |mut s: Session| {
            if let Some(bytes) = split {
                s.split_writes(bytes);
            }
            if s.accept() {
                s.answer(&|r: &Request| match r.sql.as_str() {
                    "SELECT c, k FROM sbtest1" => Reply::Rows {
                        columns: vec!["c".into(), "k".into()],
                        rows: sent.clone(),
                    },
                    sql => Reply::usual(sql),
                });
            }
        });
        let mut conn = connect(&server);
        for _ in 0..2 {
            conn.send_query("SELECT c, k FROM sbtest1").unwrap();
            assert_eq!(conn.get_result().unwrap(), Some(ResultStatus::TuplesOk));
            assert_eq!(conn.ntuples(), 300, "{split:?}");
            assert_eq!(
                conn.last_row_value(0),
                Some(format!("{:0>120}", 300).as_bytes())
            );
            assert_eq!(conn.last_row_value(1), Some(&b"300"[..]));
            assert_eq!(conn.get_result().unwrap(), None);
        }
        let all = conn.query_rows("SELECT c, k FROM sbtest1").unwrap();
        assert_eq!(all, rows, "{split:?}");
    }
}
