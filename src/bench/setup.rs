//! Before the clients start: the setup connection (with pgbench's password prompt),
//! the version banner, the scale and partitioning of the standard tables when a
//! builtin script runs (pgbench.c `GetTableInfo`), and the pre-run vacuum.

use crate::cli::options::{BenchOptions, Common};
use crate::logging;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};

/// What the report needs from the setup phase.
pub struct Setup {
    pub scale: i32,
    pub partitions: Option<(&'static str, i32)>,
}

/// Connects as pgbench's `doConnect` does: when the server wants a password and none
/// is known, asks for one on the terminal and tries again; later connections reuse it.
pub fn connect_with_prompt(args: &mut ConnectArgs) -> Result<(Connection, ConnectOptions), String> {
    loop {
        let opts = ConnectOptions::from_args(args).map_err(|e| e.to_string())?;
        match Connection::connect(&opts) {
            Ok(conn) => return Ok((conn, opts)),
            Err(e) if e.needs_password() && args.password.is_none() => {
                match crate::sys::prompt_password("Password: ") {
                    Some(pw) => args.password = Some(pw),
                    None => return Err(e.to_string()),
                }
            }
            Err(e) => return Err(e.to_string()),
        }
    }
}

/// Runs the setup phase; `Err` is the exit status.
pub fn prepare(
    args: &mut ConnectArgs,
    bench: &BenchOptions,
    common: &Common,
) -> Result<(Setup, ConnectOptions), i32> {
    let (mut conn, opts) = match connect_with_prompt(args) {
        Ok(c) => c,
        Err(msg) => {
            logging::error(&msg);
            logging::error("could not create connection for setup");
            return Err(1);
        }
    };
    if common.debug {
        let (host, port) = opts.hosts().into_iter().next().unwrap_or_default();
        let (what, n) = if bench.duration <= 0 {
            ("nxacts", bench.nxacts)
        } else {
            ("duration", bench.duration)
        };
        logging::info(&format!(
            "pghost: {host} pgport: {port} nclients: {} {what}: {n} dbName: {}",
            bench.nclients,
            opts.dbname()
        ));
    }
    print_banner(&conn);

    let mut setup = Setup {
        scale: bench.scale,
        partitions: None,
    };
    if bench.internal_script_used {
        table_info(&mut conn, opts.dbname(), bench.scale_given, &mut setup)?;
    }
    if !bench.no_vacuum {
        logging::raw("starting vacuum...");
        for sql in [
            "vacuum pgbench_branches",
            "vacuum pgbench_tellers",
            "truncate pgbench_history",
        ] {
            try_execute(&mut conn, sql);
        }
        logging::raw("end.\n");
        if bench.vacuum_all {
            logging::raw("starting vacuum pgbench_accounts...");
            try_execute(&mut conn, "vacuum analyze pgbench_accounts");
            logging::raw("end.\n");
        }
    }
    Ok((setup, opts))
}

/// `printVersion`: our version, and the server's when it differs.
fn print_banner(conn: &Connection) {
    use std::io::Write;
    let ours = crate::cli::help::pg_version();
    let line = if conn.server_version_num() != crate::cli::help::PG_VERSION_NUM {
        let server = conn.parameter("server_version").unwrap_or("unknown");
        format!("pgbench ({ours}, server {server})\n")
    } else {
        format!("pgbench ({ours})\n")
    };
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
}

/// `tryExecuteStatement`: errors are printed and ignored.
fn try_execute(conn: &mut Connection, sql: &str) {
    if let Err(e) = conn.execute(sql) {
        logging::error(&e.to_string());
        logging::detail("(ignoring this error and continuing anyway)");
    }
}

/// `GetTableInfo`: the scale from `pgbench_branches`, partitioning of `pgbench_accounts`.
fn table_info(
    conn: &mut Connection,
    dbname: &str,
    scale_given: bool,
    setup: &mut Setup,
) -> Result<(), i32> {
    let hint =
        format!("Perhaps you need to do initialization (\"pgbench -i\") in database \"{dbname}\".");
    match conn.query_rows("select count(*) from pgbench_branches") {
        Ok(rows) => {
            let text = rows
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .unwrap_or_default();
            let scale: i64 = text.trim().parse().unwrap_or(0);
            if scale < 0 {
                logging::error(&format!(
                    "invalid count(*) from pgbench_branches: \"{text}\""
                ));
                return Err(1);
            }
            setup.scale = scale as i32;
        }
        Err(e) => {
            logging::error(&format!("could not count number of branches: {e}"));
            if e.db_error().is_some_and(|d| d.code() == "42P01") {
                logging::hint(&hint);
            }
            return Err(1);
        }
    }
    if scale_given {
        logging::warning(&format!(
            "scale option ignored, using count from pgbench_branches table ({})",
            setup.scale
        ));
    }
    let sql = "select o.n, p.partstrat, pg_catalog.count(i.inhparent) \
        from pg_catalog.pg_class as c \
        join pg_catalog.pg_namespace as n on (n.oid = c.relnamespace) \
        cross join lateral (select pg_catalog.array_position(pg_catalog.current_schemas(true), n.nspname)) as o(n) \
        left join pg_catalog.pg_partitioned_table as p on (p.partrelid = c.oid) \
        left join pg_catalog.pg_inherits as i on (c.oid = i.inhparent) \
        where c.relname = 'pgbench_accounts' and o.n is not null \
        group by 1, 2 \
        order by 1 asc \
        limit 1";
    // pgbench: a failing query means an old server; assume no partitions.
    if let Ok(rows) = conn.query_rows(sql) {
        if rows.len() != 1 {
            logging::error("no pgbench_accounts table found in search_path");
            logging::hint(&hint);
            return Err(1);
        }
        let row = &rows[0];
        let count: i32 = row
            .get(2)
            .cloned()
            .flatten()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        setup.partitions = match row.get(1).cloned().flatten().as_deref() {
            None => None,
            Some("r") => Some(("range", count)),
            Some("h") => Some(("hash", count)),
            Some(other) => {
                logging::error(&format!("unexpected partition method: \"{other}\""));
                return Err(1);
            }
        };
    }
    Ok(())
}
