//! sysbench's `prepare` on PostgreSQL (`oltp_common.lua`'s `create_table`): tables
//! `sbtest1..N` with its columns, types and defaults, a `SERIAL` key (`INTEGER NOT
//! NULL` without `auto_inc`), `table_size` rows of its shapes (`k` from
//! `sysbench.rand.default` over the table size, `c` and `pad` as its dash-joined
//! 11-digit groups), and the `k_N` secondary index (`create_secondary`). The rows go
//! through COPY instead of multi-row INSERTs, and the primary key is added after the
//! load (same constraint, `sbtestN_pkey`, built once). The tables are dealt to `-j`
//! connections as sysbench deals them to its threads (table `i` to connection
//! `(i - 1) % j`).
//!
//! Unlike sysbench's, a prepare cut short (Ctrl-C, an error) leaves nothing half
//! done: the test's tables are all dropped first, then each is created, filled and
//! indexed in one transaction, so a table is there whole or not at all, and a run
//! refuses a missing one ([`check_tables`]).

use std::io::Write;
use std::time::Instant;

use pgbench_script::prng::Prng;
use pgbench_script::sysbench as rand;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};

use super::script::{C_TEMPLATE, PAD_TEMPLATE};
use super::{Config, RandType};
use crate::workload::{hint, PrepareError};

/// COPY data is sent in writes of about this many bytes.
const COPY_CHUNK: usize = 64 * 1024;

/// Drops and creates the tables over `jobs` connections, `main` being the first.
pub fn run(
    config: &Config,
    main: Connection,
    options: &ConnectOptions,
    jobs: usize,
    seed: u64,
) -> Result<(), PrepareError> {
    let start = Instant::now();
    let jobs = jobs.clamp(1, config.tables as usize);
    let mut conns = vec![main];
    for _ in 1..jobs {
        let conn =
            Connection::connect(options).map_err(|e| PrepareError::Connect(e.to_string()))?;
        conns.push(conn);
    }
    for conn in &conns {
        crate::init::interrupt::register(conn);
    }
    // One statement for all: a prepare cut short leaves none of an earlier prepare's
    // tables beside those it finished (of another size, say).
    let tables: Vec<String> = (1..=config.tables).map(|t| format!("sbtest{t}")).collect();
    execute(
        &mut conns[0],
        &format!("DROP TABLE IF EXISTS {}", tables.join(", ")),
    )?;
    let results: Vec<Result<(), PrepareError>> = std::thread::scope(|s| {
        let handles: Vec<_> = conns
            .into_iter()
            .enumerate()
            .map(|(j, mut conn)| {
                s.spawn(move || {
                    let mut table = j as u32 + 1;
                    while table <= config.tables {
                        create_table(config, &mut conn, table, seed)?;
                        table += jobs as u32;
                    }
                    Ok(())
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(PrepareError::Interrupted)))
            .collect()
    });
    results.into_iter().collect::<Result<(), _>>()?;
    let _ = writeln!(
        std::io::stderr(),
        "done in {:.2} s.",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// sysbench's prepare lines go to stdout, whole.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(line.as_bytes());
    let _ = out.flush();
}

fn execute(conn: &mut Connection, sql: &str) -> Result<(), PrepareError> {
    conn.execute(sql).map_err(|e| PrepareError::Query {
        message: e.to_string(),
        sql: sql.to_string(),
    })
}

/// The `CREATE TABLE` of `oltp_common.lua` for PostgreSQL, without its inline
/// primary key (added after the load).
pub fn create_table_sql(config: &Config, table: u32) -> String {
    let id = if config.auto_inc {
        "SERIAL"
    } else {
        "INTEGER NOT NULL"
    };
    format!(
        "CREATE TABLE sbtest{table}(\n  id {id},\n  k INTEGER DEFAULT '0' NOT NULL,\n  \
         c CHAR(120) DEFAULT '' NOT NULL,\n  pad CHAR(60) DEFAULT '' NOT NULL\n)"
    )
}

/// One table, whole or not at all: created, filled and indexed in one transaction.
fn create_table(
    config: &Config,
    conn: &mut Connection,
    table: u32,
    seed: u64,
) -> Result<(), PrepareError> {
    execute(conn, "BEGIN")?;
    say(&format!("Creating table 'sbtest{table}'...\n"));
    execute(conn, &create_table_sql(config, table))?;
    let rows = config.prepared_rows();
    if rows > 0 {
        say(&format!("Inserting {rows} records into 'sbtest{table}'\n"));
        load(config, conn, table, seed)?;
    }
    execute(
        conn,
        &format!("ALTER TABLE sbtest{table} ADD PRIMARY KEY (id)"),
    )?;
    if config.create_secondary {
        say(&format!(
            "Creating a secondary index on 'sbtest{table}'...\n"
        ));
        execute(conn, &format!("CREATE INDEX k_{table} ON sbtest{table}(k)"))?;
    }
    execute(conn, "COMMIT")
}

/// `k` as `sb_rand(1, table_size)`: sysbench's default distribution.
fn draw_k(config: &Config, rng: &mut Prng) -> i64 {
    let size = i64::from(config.table_size);
    let drawn = match config.rand_type {
        RandType::Uniform => Ok(rng.int_range(1, size)),
        RandType::Gaussian => rand::gaussian(rng, 1, size, config.rand_spec_iter.into()),
        RandType::Special => rand::special(
            rng,
            1,
            size,
            config.rand_spec_pct.into(),
            config.rand_spec_res.into(),
            config.rand_spec_iter.into(),
        ),
        RandType::Pareto => rand::pareto(rng, 1, size, config.rand_pareto_h),
    };
    // The configuration was checked: the bounds and parameters are valid.
    drawn.unwrap_or(1)
}

/// The rows, in COPY's text format; `id` is the server's (`SERIAL`) or `1..size`.
fn load(config: &Config, conn: &mut Connection, table: u32, seed: u64) -> Result<(), PrepareError> {
    let copy_error = |e: &dyn std::fmt::Display| PrepareError::Copy {
        table: format!("sbtest{table}"),
        message: e.to_string(),
    };
    let columns = if config.auto_inc {
        "k, c, pad"
    } else {
        "id, k, c, pad"
    };
    let sql = format!("COPY sbtest{table} ({columns}) FROM STDIN");
    let mut copy = conn.copy_in(&sql).map_err(|e| copy_error(&e))?;
    let mut rng = Prng::seed(seed ^ u64::from(table).wrapping_mul(0x9E37_79B9_7F4A_7C15));
    let mut buf = String::with_capacity(COPY_CHUNK + 512);
    for id in 1..=config.prepared_rows() {
        if !config.auto_inc {
            let _ = std::fmt::Write::write_fmt(&mut buf, format_args!("{id}\t"));
        }
        let k = draw_k(config, &mut rng);
        let _ = std::fmt::Write::write_fmt(&mut buf, format_args!("{k}\t"));
        rand::rand_str(&mut rng, C_TEMPLATE, &mut buf);
        buf.push('\t');
        rand::rand_str(&mut rng, PAD_TEMPLATE, &mut buf);
        buf.push('\n');
        if buf.len() >= COPY_CHUNK {
            if crate::init::interrupt::requested() {
                return Err(PrepareError::Interrupted);
            }
            copy.write(buf.as_bytes()).map_err(|e| copy_error(&e))?;
            buf.clear();
        }
    }
    if !buf.is_empty() {
        copy.write(buf.as_bytes()).map_err(|e| copy_error(&e))?;
    }
    copy.finish().map_err(|e| copy_error(&e))?;
    Ok(())
}

/// The `-D` options a prepare of `config`'s tables needs, for the commands messages
/// suggest: the tables, their size, and the schema options not at their defaults.
pub fn prepare_options(config: &Config) -> String {
    let mut options = format!(
        "-D tables={} -D table_size={}",
        config.tables, config.table_size
    );
    if !config.auto_inc {
        options.push_str(" -D auto_inc=off");
    }
    if !config.create_secondary {
        options.push_str(" -D create_secondary=off");
    }
    options
}

/// The command that prepares `config`'s tables, with the user's connection options.
pub fn prepare_command(config: &Config, target: &ConnectArgs) -> String {
    hint::prepare_command(config.test.name(), &prepare_options(config), target)
}

/// Before a run: the first of the test's tables that does not exist or has no
/// primary key (a table left by a prepare cut short before pgbench-rs made each one
/// transaction), with the command that prepares them.
pub fn check_tables(
    config: &Config,
    conn: &mut Connection,
    target: &ConnectArgs,
) -> Result<(), String> {
    let sql = format!(
        "select n, pg_catalog.to_regclass('sbtest' || n) is null \
         from generate_series(1, {}) n \
         where not exists (select from pg_catalog.pg_index i \
           where i.indrelid = pg_catalog.to_regclass('sbtest' || n) and i.indisprimary) \
         order by n limit 1",
        config.tables
    );
    let rows = conn.query_rows(&sql).map_err(|e| e.to_string())?;
    let Some(row) = rows.first() else {
        return Ok(());
    };
    let cell = |i: usize| row.get(i).cloned().flatten().unwrap_or_default();
    let (table, name) = (cell(0), config.test.name());
    let what = if cell(1) == "t" {
        "does not exist"
    } else {
        "has no primary key (its prepare did not complete)"
    };
    Err(format!(
        "table \"sbtest{table}\" of workload {name} {what}; prepare the tables with \"{}\"",
        prepare_command(config, target)
    ))
}
