//! N connections one after another, each running one `SELECT 1` and closing, the
//! way `pgbench -C` reconnects for every transaction; used by
//! `benches/handshake/run.sh` to compare client CPU per connection (TLS handshake
//! included) with stock pgbench. Usage: `reconnect <conninfo> <N>`.

use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        eprintln!("usage: reconnect <conninfo> <N>");
        std::process::exit(2);
    }
    let n: u64 = args[2].parse().unwrap_or(0);
    let connect = ConnectArgs {
        dbname: Some(args[1].clone()),
        fallback_application_name: Some("pgbench".into()),
        ..ConnectArgs::default()
    };
    let opts = ConnectOptions::from_args(&connect).unwrap_or_else(|e| fail(&e));
    for _ in 0..n {
        let mut conn = Connection::connect(&opts).unwrap_or_else(|e| fail(&e));
        let rows = conn.query_rows("select 1").unwrap_or_else(|e| fail(&e));
        if rows.first().and_then(|r| r.first()) != Some(&Some("1".to_string())) {
            fail(&"select 1 did not return 1");
        }
    }
}

fn fail(e: &dyn std::fmt::Display) -> ! {
    eprintln!("reconnect: {e}");
    std::process::exit(1);
}
