//! N `SELECT 1` round trips on one connection, the way pgbench sends them; used by
//! `benches/roundtrip/run.sh` under callgrind to count client instructions per round
//! trip. Usage: `roundtrip <conninfo> <simple|extended|prepared> <N>`.

use pgbench_wire::{ConnectArgs, ConnectOptions, Connection, ResultStatus};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: roundtrip <conninfo> <simple|extended|prepared> <N>");
        std::process::exit(2);
    }
    let n: u64 = args[3].parse().unwrap_or(0);
    let connect = ConnectArgs {
        dbname: Some(args[1].clone()),
        fallback_application_name: Some("pgbench".into()),
        ..ConnectArgs::default()
    };
    let opts = ConnectOptions::from_args(&connect).unwrap_or_else(|e| fail(&e));
    let mut conn = Connection::connect(&opts).unwrap_or_else(|e| fail(&e));
    let sql = "select 1;";
    if args[2] == "prepared" {
        conn.send_prepare("P_0", sql, 0)
            .unwrap_or_else(|e| fail(&e));
        drain(&mut conn);
    }
    let mut ones = 0u64;
    for _ in 0..n {
        let sent = match args[2].as_str() {
            "simple" => conn.send_query(sql),
            "extended" => conn.send_query_params(sql, &[]),
            _ => conn.send_query_prepared("P_0", &[]),
        };
        sent.unwrap_or_else(|e| fail(&e));
        while let Some(r) = conn.get_result().unwrap_or_else(|e| fail(&e)) {
            match r {
                ResultStatus::TuplesOk if conn.last_row_value(0) == Some(b"1") => ones += 1,
                ResultStatus::TuplesOk => {}
                other => fail(&format!("unexpected result {other:?}")),
            }
        }
    }
    if ones != n {
        fail(&format!("expected {n} rows, got {ones}"));
    }
}

fn drain(conn: &mut Connection) {
    while let Some(r) = conn.get_result().unwrap_or_else(|e| fail(&e)) {
        if let ResultStatus::Error(e) = r {
            fail(&e);
        }
    }
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    eprintln!("roundtrip: {e}");
    std::process::exit(1);
}
