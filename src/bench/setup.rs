//! Before the clients start: the setup connection (with pgbench's password prompt),
//! the version banner, the scale and partitioning of the standard tables when a
//! builtin script runs (pgbench.c `GetTableInfo`), and the pre-run vacuum.

use super::error::RunError;
use super::plan::{BenchPlan, Vacuum};
use crate::logging::Output;
use pgbench_results::{Limit, Partitions};
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};

/// What the report needs from the setup phase.
pub struct Setup {
    pub scale: i32,
    pub partitions: Option<Partitions>,
    /// The server's `server_version`.
    pub server_version: Option<String>,
    /// The settings a results file records (`--export-json`/`--export-html` only).
    pub server_settings: std::collections::BTreeMap<String, String>,
}

/// Runs the setup phase: connect, banner, table info, vacuum.
pub fn prepare(
    args: &mut ConnectArgs,
    plan: &BenchPlan,
    out: &dyn Output,
) -> Result<(Setup, ConnectOptions), RunError> {
    let (mut conn, opts) = crate::connect::connect_with_prompt(args)
        .map_err(|source| RunError::SetupConnect { source })?;
    if plan.debug {
        // The host and port connected to (after failover), as pgbench's PQhost/PQport.
        let (host, port) = (conn.host().to_string(), conn.port().to_string());
        let (what, n) = match plan.settings.limit {
            Limit::Transactions(n) => ("nxacts", i64::from(n)),
            Limit::Duration(s) => ("duration", s),
        };
        out.info(&format!(
            "pghost: {host} pgport: {port} nclients: {} {what}: {n} dbName: {}",
            plan.settings.clients,
            opts.dbname()
        ));
    }
    print_banner(&conn, out);

    let mut setup = Setup {
        scale: plan.scale.value,
        partitions: None,
        server_version: conn.parameter("server_version").map(str::to_string),
        server_settings: if plan.keep.server_settings {
            server_settings(&mut conn)
        } else {
            Default::default()
        },
    };
    if plan.builtin_used {
        table_info(&mut conn, opts.dbname(), plan.scale.given, &mut setup, out)?;
    }
    if let Some(workload) = &plan.workload {
        workload
            .check_tables(&mut conn, args)
            .map_err(|message| RunError::Setup {
                message,
                hint: None,
            })?;
        if let Some(scale) = workload.table_scale(&mut conn) {
            setup.scale = scale;
        }
        for warning in workload.unused_tables(&mut conn) {
            out.warning(&warning);
        }
    }
    if plan.vacuum != Vacuum::Skip {
        out.stderr("starting vacuum...");
        for sql in [
            "vacuum pgbench_branches",
            "vacuum pgbench_tellers",
            "truncate pgbench_history",
        ] {
            try_execute(&mut conn, sql, out);
        }
        out.stderr("end.\n");
        if plan.vacuum == Vacuum::All {
            out.stderr("starting vacuum pgbench_accounts...");
            try_execute(&mut conn, "vacuum analyze pgbench_accounts", out);
            out.stderr("end.\n");
        }
    }
    Ok((setup, opts))
}

/// The settings a results file records, as `SHOW` prints them; a server that lacks
/// one (an older version) just does not list it.
fn server_settings(conn: &mut Connection) -> std::collections::BTreeMap<String, String> {
    let names: Vec<String> = pgbench_results::document::SERVER_SETTINGS
        .iter()
        .map(|n| format!("'{n}'"))
        .collect();
    let sql = format!(
        "select n, current_setting(n, true) from unnest(array[{}]) n",
        names.join(", ")
    );
    conn.query_rows(&sql)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|row| match row.as_slice() {
            [Some(name), Some(value)] => Some((name.clone(), value.clone())),
            _ => None,
        })
        .collect()
}

/// `printVersion`: our version, and the server's when it differs.
fn print_banner(conn: &Connection, out: &dyn Output) {
    let line = pgbench_results::show::banner(
        &crate::version::pg_version(),
        pgbench_results::stock::PG_VERSION_NUM,
        conn.parameter("server_version"),
        crate::version::server_version_num(conn),
    );
    out.stdout(&line);
}

/// `tryExecuteStatement`: errors are printed and ignored.
fn try_execute(conn: &mut Connection, sql: &str, out: &dyn Output) {
    if let Err(e) = conn.execute(sql) {
        out.error(&e.to_string());
        out.detail("(ignoring this error and continuing anyway)");
    }
}

/// `GetTableInfo`: the scale from `pgbench_branches`, partitioning of `pgbench_accounts`.
fn table_info(
    conn: &mut Connection,
    dbname: &str,
    scale_given: bool,
    setup: &mut Setup,
    out: &dyn Output,
) -> Result<(), RunError> {
    let hint =
        format!("Perhaps you need to do initialization (\"pgbench -i\") in database \"{dbname}\".");
    let fail = |message: String, hint: Option<&String>| RunError::Setup {
        message,
        hint: hint.cloned(),
    };
    match conn.query_rows("select count(*) from pgbench_branches") {
        Ok(rows) => {
            let text = rows
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .unwrap_or_default();
            let scale: i64 = text.trim().parse().unwrap_or(0);
            if scale < 0 {
                return Err(fail(
                    format!("invalid count(*) from pgbench_branches: \"{text}\""),
                    None,
                ));
            }
            setup.scale = scale as i32;
            // pgbench-rs: tables of a resumable load that did not finish are refused.
            if let Some(message) =
                crate::init::resume::unfinished(conn, crate::init::resume::PGBENCH)
            {
                return Err(fail(message, None));
            }
        }
        Err(e) => {
            let missing = e.db_error().is_some_and(|d| d.code() == "42P01");
            return Err(fail(
                format!("could not count number of branches: {e}"),
                missing.then_some(&hint),
            ));
        }
    }
    if scale_given {
        out.warning(&format!(
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
            return Err(fail(
                "no pgbench_accounts table found in search_path".to_string(),
                Some(&hint),
            ));
        }
        let row = &rows[0];
        let count: i32 = row
            .get(2)
            .cloned()
            .flatten()
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let method = match row.get(1).cloned().flatten().as_deref() {
            None => None,
            Some("r") => Some("range"),
            Some("h") => Some("hash"),
            Some(other) => {
                return Err(fail(
                    format!("unexpected partition method: \"{other}\""),
                    None,
                ))
            }
        };
        setup.partitions = method.map(|m| Partitions {
            method: m.to_string(),
            count,
        });
    }
    Ok(())
}
