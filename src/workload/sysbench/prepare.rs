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
use crate::init::progress::unit_line;
use crate::init::resume::{self, Record, Resumable, Start, SYSBENCH};
use crate::workload::{hint, PrepareError};

/// COPY data is sent in writes of about this many bytes.
const COPY_CHUNK: usize = 64 * 1024;

/// Drops and creates the tables over `jobs` connections, `main` being the first;
/// with `--resume` or `--shard` only this shard's tables that the record
/// ([`crate::init::resume`]) does not have, each recorded in its own transaction.
/// Every prepare ends by counting the rows of its tables.
pub fn run(
    config: &Config,
    main: Connection,
    options: &ConnectOptions,
    how: &crate::workload::PrepareOptions,
) -> Result<(), PrepareError> {
    let start = Instant::now();
    let resumable = how.resumable;
    let mut conns = vec![main];
    let all: Vec<u32> = (1..=config.tables).collect();
    crate::metrics::load::declare_steps(&["drop tables", "prepare tables", "check"]);
    let record = if resumable.active() {
        Some(start_or_continue(config, &mut conns[0], resumable)?)
    } else {
        crate::metrics::load::step("drop tables");
        drop_tables(config, &mut conns[0])?;
        None
    };
    let mine: Vec<u32> = all[resumable.share(all.len())]
        .iter()
        .copied()
        .filter(|t| record.as_ref().is_none_or(|r| !r.units.contains(&unit(*t))))
        .collect();
    crate::metrics::load::step("prepare tables");
    if record.is_some() {
        let share = resumable.share(all.len()).len();
        crate::metrics::load::units(share - mine.len(), share);
    }
    for t in &mine {
        crate::metrics::load::expect(&unit(*t), i64::from(config.prepared_rows()));
    }
    let jobs = how.jobs.clamp(1, mine.len().max(1));
    for _ in 1..jobs {
        let conn =
            Connection::connect(options).map_err(|e| PrepareError::Connect(e.to_string()))?;
        conns.push(conn);
    }
    for conn in &conns {
        crate::init::interrupt::register(conn);
    }
    let recorded = record.is_some();
    let finished = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<Result<(), PrepareError>> = std::thread::scope(|s| {
        let handles: Vec<_> = conns
            .iter_mut()
            .enumerate()
            .map(|(j, conn)| {
                // Dealt as sysbench deals tables to its threads.
                let tables: Vec<u32> = mine.iter().copied().skip(j).step_by(jobs).collect();
                let (finished, total) = (&finished, mine.len());
                s.spawn(move || {
                    tables.into_iter().try_for_each(|table| {
                        let began = Instant::now();
                        let bytes = create_table(config, conn, table, how.seed, recorded)?;
                        let done = finished.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
                        let line = progress_line(
                            table,
                            config.prepared_rows(),
                            bytes,
                            began.elapsed().as_secs_f64(),
                            (done, total),
                            start.elapsed().as_secs_f64(),
                        );
                        let _ = std::io::stderr().lock().write_all(line.as_bytes());
                        Ok(())
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(PrepareError::Interrupted)))
            .collect()
    });
    results.into_iter().collect::<Result<(), _>>()?;
    let main = &mut conns[0];
    let whole = match record {
        Some(_) => all_recorded(config, main, resumable)?,
        None => true,
    };
    if whole {
        crate::metrics::load::step("check");
        self_check(config, main)?;
        if recorded {
            resume::finish(main, SYSBENCH)?;
        }
    } else {
        let shard = resumable.shard.map(|s| s.label()).unwrap_or_default();
        let _ = writeln!(
            std::io::stderr(),
            "shard {shard} prepared its tables; the others' shards prepare the rest"
        );
    }
    let _ = writeln!(
        std::io::stderr(),
        "done in {:.2} s.",
        start.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The line after each table (sysbench prints none): [`unit_line`]'s.
fn progress_line(
    table: u32,
    rows: u32,
    bytes: u64,
    secs: f64,
    (done, total): (usize, usize),
    elapsed: f64,
) -> String {
    let unit = format!("sbtest{table}");
    unit_line(
        &unit,
        (rows.into(), bytes, secs),
        (done, total, "tables"),
        elapsed,
    )
}

/// A table's unit in the record.
fn unit(table: u32) -> String {
    format!("sbtest{table}")
}

/// One statement for all: a prepare cut short leaves none of an earlier prepare's
/// tables beside those it finished (of another size, say).
fn drop_tables(config: &Config, conn: &mut Connection) -> Result<(), PrepareError> {
    let tables: Vec<String> = (1..=config.tables).map(unit).collect();
    execute(conn, &format!("DROP TABLE IF EXISTS {}", tables.join(", ")))?;
    Ok(resume::finish(conn, SYSBENCH)?)
}

/// What a resumed prepare must share with the one it continues (not the seed: a
/// table of another seed is as good a table).
fn params(config: &Config) -> String {
    format!(
        "{} tables of {} rows, auto_inc {}, create_secondary {}, rand_type {:?}",
        config.tables,
        config.prepared_rows(),
        if config.auto_inc { "on" } else { "off" },
        if config.create_secondary { "on" } else { "off" },
        config.rand_type
    )
    .to_lowercase()
}

/// Under the advisory lock: a new prepare (tables dropped, record begun) or the one
/// to continue; a shard says it started.
fn start_or_continue(
    config: &Config,
    conn: &mut Connection,
    how: Resumable,
) -> Result<Record, PrepareError> {
    let params = params(config);
    resume::lock(conn, SYSBENCH)?;
    let started = (|| -> Result<Record, PrepareError> {
        let record = match resume::decide(conn, SYSBENCH, &params, how)? {
            Start::Fresh => {
                drop_tables(config, conn)?;
                resume::begin(conn, SYSBENCH, &params)?;
                Record {
                    params: params.clone(),
                    ..Record::default()
                }
            }
            Start::Continue(record) => {
                let _ = writeln!(
                    std::io::stderr(),
                    "resuming the prepare ({params}): {} of {} tables prepared",
                    record.units.len(),
                    config.tables
                );
                record
            }
        };
        if let Some(shard) = how.shard {
            resume::mark(conn, SYSBENCH, &format!("shard {} started", shard.label()))?;
        }
        Ok(record)
    })();
    let unlocked = resume::unlock(conn, SYSBENCH);
    let record = started?;
    unlocked?;
    Ok(record)
}

/// Under the lock, after this process's tables: whether every table is in (then
/// this process counts them and ends the record).
fn all_recorded(
    config: &Config,
    conn: &mut Connection,
    how: Resumable,
) -> Result<bool, PrepareError> {
    resume::lock(conn, SYSBENCH)?;
    let whole = (|| -> Result<bool, PrepareError> {
        if let Some(shard) = how.shard {
            resume::mark(conn, SYSBENCH, &format!("shard {} loaded", shard.label()))?;
        }
        let record = resume::read(conn, SYSBENCH)?.unwrap_or_default();
        Ok(record.units.len() == config.tables as usize)
    })();
    let unlocked = resume::unlock(conn, SYSBENCH);
    let whole = whole?;
    unlocked?;
    Ok(whole)
}

/// Every table's rows counted against the table size; a line per table that
/// differs, and an error when one does.
fn self_check(config: &Config, conn: &mut Connection) -> Result<(), PrepareError> {
    let expected: Vec<(String, i64)> = (1..=config.tables)
        .map(|t| (unit(t), i64::from(config.prepared_rows())))
        .collect();
    let counted = resume::count_tables(conn, &expected)?;
    let lines = resume::count_lines(&counted);
    if lines.is_empty() {
        return Ok(());
    }
    for line in &lines {
        let _ = writeln!(std::io::stderr(), "{line}");
    }
    Err(PrepareError::Miscounted(lines.len()))
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

/// One table, whole or not at all: created, filled and indexed in one transaction
/// (`recorded`: with its row of the record, so a table is recorded exactly when it
/// is there).
fn create_table(
    config: &Config,
    conn: &mut Connection,
    table: u32,
    seed: u64,
    recorded: bool,
) -> Result<u64, PrepareError> {
    execute(conn, "BEGIN")?;
    say(&format!("Creating table 'sbtest{table}'...\n"));
    execute(conn, &create_table_sql(config, table))?;
    let rows = config.prepared_rows();
    let mut bytes = 0;
    if rows > 0 {
        say(&format!("Inserting {rows} records into 'sbtest{table}'\n"));
        bytes = load(config, conn, table, seed)?;
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
    if recorded {
        if crate::init::interrupt::requested() {
            return Err(PrepareError::Interrupted);
        }
        let rows = config.prepared_rows().to_string();
        execute(conn, &resume::unit_sql(SYSBENCH, &unit(table), &rows))?;
    }
    execute(conn, "COMMIT")?;
    if recorded {
        crate::metrics::load::unit_done();
    }
    Ok(bytes)
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
/// The bytes sent.
fn load(
    config: &Config,
    conn: &mut Connection,
    table: u32,
    seed: u64,
) -> Result<u64, PrepareError> {
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
    let mut sent = 0;
    // Rows in `buf`, for the metrics when it is sent.
    let name = unit(table);
    let mut pending = 0;
    for id in 1..=config.prepared_rows() {
        pending += 1;
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
            sent += buf.len() as u64;
            buf.clear();
            crate::metrics::load::rows(&name, std::mem::take(&mut pending));
        }
    }
    if !buf.is_empty() {
        copy.write(buf.as_bytes()).map_err(|e| copy_error(&e))?;
        sent += buf.len() as u64;
        crate::metrics::load::rows(&name, pending);
    }
    copy.finish().map_err(|e| copy_error(&e))?;
    Ok(sent)
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
    if let Some(unfinished) = resume::unfinished(conn, SYSBENCH) {
        return Err(unfinished);
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_per_table_with_its_rate_and_the_time_left() {
        assert_eq!(
            progress_line(3, 100_000, 19_000_000, 0.5, (3, 8), 1.5),
            "sbtest3: 100000 rows, 19.0 MB in 0.50 s (38.0 MB/s); 3 of 8 tables, 2.5 s left\n"
        );
        assert!(progress_line(1, 0, 0, 0.0, (1, 1), 0.0).ends_with("1 of 1 tables, 0.0 s left\n"));
    }
}
