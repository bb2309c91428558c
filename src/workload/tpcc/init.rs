//! `-i --workload=tpcc -s W [-j N]`: HammerDB's PostgreSQL TPROC-C schema, loaded
//! with W warehouses by client-side generation ([`super::rows`]) through COPY, over N
//! connections (the items, then one warehouse after another, to whichever connection
//! is free: the work queue of pgbench's `-j` load, `src/init/queue.rs`). In mode
//! `hammerdb`, HammerDB's build order: the tables with their primary keys (built as
//! the rows go in), the load, the two secondary indexes, the routines, ANALYZE (no
//! vacuum). In mode `spec`: the tables, the load, vacuum (with analyze), keys and
//! indexes, the functions. Statements per table go a table per connection.
//! Messages and progress lines are pgbench's init's; the `done in` line names the
//! steps.
//!
//! Spread over connections, the load cannot be one transaction: the comment on
//! `warehouse` ([`super::marker`]) says "incomplete" from the tables' creation and
//! "complete" only after the last step, and a run refuses anything else.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use pgbench_wire::{ConnectOptions, Connection};

use super::marker::mark_sql;
use super::rows::{self, CUSTOMERS, DISTRICTS, FIRST_NEW_ORDER, ITEMS, ORDERS};
use super::schema::{self, COPY, TABLES};
use super::{hammerdb_routines, spec_functions, Config, Mode};
use crate::init::interrupt;
use crate::init::progress::unit_line;
use crate::init::queue::{run_queue, Queue, RowCount};
use crate::init::resume::{self, Record, Resumable, Start, TPCC};
use crate::workload::{PrepareError, PrepareOptions};

/// Rows generated between two reports to the progress line.
const BATCH_ROWS: i32 = 5_000;

/// What to load.
#[derive(Debug, Clone, Copy)]
pub struct TpccInit {
    pub warehouses: i32,
    /// Connections to load over (1: the main one only).
    pub jobs: usize,
    /// `-q`: a progress line every 5 s instead of every 100,000 rows.
    pub quiet: bool,
    /// Whose values, build order and routines.
    pub mode: Mode,
    /// HammerDB's routines as PROCEDUREs (`-D storedprocs=1`).
    pub procedures: bool,
    /// `order_line`'s partitions (0: not partitioned).
    pub partitions: i32,
    /// `--resume`, `--shard=K/N`: load in recorded units ([`crate::init::resume`]).
    pub resumable: Resumable,
}

/// One unit of the load.
#[derive(Debug, Clone, Copy)]
enum Job {
    Items(Mode),
    Warehouse(i32, Mode),
}

impl Job {
    /// Its name in the record.
    fn name(&self) -> String {
        match self {
            Job::Items(_) => "items".to_string(),
            Job::Warehouse(w, _) => format!("warehouse {w}"),
        }
    }

    /// The rows it writes.
    fn rows(&self) -> i64 {
        match *self {
            Job::Items(_) => i64::from(ITEMS),
            Job::Warehouse(w, _) => total_rows_of(w),
        }
    }
}

/// The rows of a unit in each of [`TABLES`] (in its order), for the metrics' rows
/// expected.
fn table_rows_of(job: &Job) -> [i64; 9] {
    let Job::Warehouse(w, _) = *job else {
        return [0, 0, 0, 0, 0, 0, 0, i64::from(ITEMS), 0];
    };
    let districts = i64::from(DISTRICTS);
    let lines: i64 = (1..=DISTRICTS)
        .map(|d| rows::line_counts(w, d).iter().sum::<i64>())
        .sum();
    [
        1,
        districts,
        districts * i64::from(CUSTOMERS),
        districts * i64::from(CUSTOMERS),
        districts * i64::from(ORDERS - FIRST_NEW_ORDER + 1),
        districts * i64::from(ORDERS),
        lines,
        0,
        i64::from(ITEMS),
    ]
}

/// Every row the load writes (the line counts are drawn apart, so known first).
pub fn total_rows(warehouses: i32) -> i64 {
    i64::from(ITEMS) + (1..=warehouses).map(total_rows_of).sum::<i64>()
}

/// The rows of warehouse `w`'s unit.
fn total_rows_of(w: i32) -> i64 {
    let per_district =
        i64::from(CUSTOMERS) * 2 + i64::from(ORDERS) + i64::from(ORDERS - FIRST_NEW_ORDER + 1);
    let fixed = 1 + i64::from(DISTRICTS) + i64::from(ITEMS) + i64::from(DISTRICTS) * per_district;
    let lines: i64 = (1..=DISTRICTS)
        .map(|d| rows::line_counts(w, d).iter().sum::<i64>())
        .sum();
    fixed + lines
}

/// `-i --workload=tpcc -s W -j N`.
pub fn prepare(
    config: &Config,
    main: Connection,
    conn: &ConnectOptions,
    how: &PrepareOptions,
) -> Result<(), PrepareError> {
    interrupt::register(&main);
    let opts = TpccInit {
        warehouses: how.scale,
        jobs: how.jobs.max(1),
        quiet: how.quiet,
        mode: config.mode,
        procedures: config.storedprocs,
        partitions: schema::order_line_partitions(config.partition, how.scale),
        resumable: how.resumable,
    };
    if config.partition && opts.partitions == 0 {
        crate::logging::info(
            "order_line is not partitioned below 200 warehouses (-D partition=1, as HammerDB)",
        );
    }
    run(main, conn, &opts)
}

/// Stops the load when Ctrl-C was pressed.
fn interrupted() -> Result<(), PrepareError> {
    interrupt::check().map_err(|_| PrepareError::Interrupted)
}

/// Runs the load on `main` and `jobs - 1` more connections.
pub fn run(main: Connection, conn: &ConnectOptions, opts: &TpccInit) -> Result<(), PrepareError> {
    let start = Instant::now();
    let mut conns = vec![main];
    for _ in 1..opts.jobs.max(1) {
        let c = Connection::connect(conn).map_err(|e| PrepareError::Connect(e.to_string()))?;
        interrupt::register(&c);
        conns.push(c);
    }
    let mut times: Vec<(&str, f64)> = Vec::new();
    let mut timed = |name, f: &mut dyn FnMut() -> Result<(), PrepareError>| {
        crate::metrics::load::step(name);
        let t = Instant::now();
        f()?;
        times.push((name, t.elapsed().as_secs_f64()));
        interrupted()
    };
    let how = opts.resumable;
    let record = if how.active() {
        Some(start_or_continue(&mut conns[0], opts, &mut timed)?)
    } else {
        fresh_tables(&mut conns[0], opts, &mut timed)?;
        None
    };
    timed("client-side generate", &mut || {
        say("generating data (client-side)...\n");
        generate(&mut conns, opts, record.as_ref())
    })?;
    // A shard that is not the last to finish leaves the steps after the load.
    let record = match record {
        Some(_) => match claim_build(&mut conns[0], opts)? {
            Some(now) => Some(now),
            None => {
                let shard = how.shard.map(|s| s.label()).unwrap_or_default();
                say(&format!(
                    "shard {shard} loaded its warehouses; the last shard to finish runs the steps after the load\n"
                ));
                return done(start, &times);
            }
        },
        None => None,
    };
    let keys = |conns: &mut [Connection]| {
        keys(conns, &schema::keys_after_load(opts.mode), record.as_ref())
    };
    match opts.mode {
        Mode::Hammerdb => {
            timed("indexes", &mut || {
                say("creating indexes...\n");
                keys(&mut conns)
            })?;
            timed("functions", &mut || routines(&mut conns[0], opts))?;
            timed("analyze", &mut || {
                say("analyzing...\n");
                statements(&mut conns, &per_table("analyze"))
            })?;
        }
        Mode::Spec => {
            timed("vacuum", &mut || {
                say("vacuuming...\n");
                statements(&mut conns, &per_table("vacuum analyze"))
            })?;
            timed("primary keys", &mut || {
                say("creating primary keys...\n");
                keys(&mut conns)
            })?;
            timed("functions", &mut || routines(&mut conns[0], opts))?;
        }
    }
    // Every load counts what it wrote before it calls itself complete.
    self_check(&mut conns[0], opts.warehouses)?;
    // Last: only now is the load whole.
    execute(&mut conns[0], &mark_sql(opts.warehouses, true))?;
    if record.is_some() {
        resume::finish(&mut conns[0], TPCC)?;
    }
    done(start, &times)
}

/// The `done in` line.
fn done(start: Instant, times: &[(&str, f64)]) -> Result<(), PrepareError> {
    let steps: Vec<String> = times
        .iter()
        .map(|(name, secs)| format!("{name} {secs:.2} s"))
        .collect();
    say(&format!(
        "done in {:.2} s ({}).\n",
        start.elapsed().as_secs_f64(),
        steps.join(", ")
    ));
    Ok(())
}

type Timed<'a> = dyn FnMut(&'static str, &mut dyn FnMut() -> Result<(), PrepareError>) -> Result<(), PrepareError>
    + 'a;

/// Drops whatever an earlier load left (its record too) and creates the tables,
/// marked incomplete.
fn fresh_tables(
    conn: &mut Connection,
    opts: &TpccInit,
    timed: &mut Timed<'_>,
) -> Result<(), PrepareError> {
    timed("drop tables", &mut || {
        say("dropping old tables...\n");
        let list = TABLES.join(", ");
        execute(conn, &format!("drop table if exists {list} cascade"))?;
        Ok(resume::finish(conn, TPCC)?)
    })?;
    timed("create tables", &mut || {
        say("creating tables...\n");
        schema::create_tables(opts.mode, opts.partitions)
            .iter()
            .try_for_each(|sql| execute(conn, sql))?;
        execute(conn, &mark_sql(opts.warehouses, false))
    })
}

/// The parameters a resumed load must share with the one it continues.
fn params(opts: &TpccInit) -> String {
    format!(
        "{} warehouses, mode {}, order_line partitions {}, {}",
        opts.warehouses,
        match opts.mode {
            Mode::Spec => "spec",
            Mode::Hammerdb => "hammerdb",
        },
        opts.partitions,
        if opts.procedures {
            "procedures"
        } else {
            "functions"
        }
    )
}

/// Under the advisory lock: a new load (tables made, record begun) or the one to
/// continue.
fn start_or_continue(
    conn: &mut Connection,
    opts: &TpccInit,
    timed: &mut Timed<'_>,
) -> Result<Record, PrepareError> {
    let how = opts.resumable;
    let params = params(opts);
    resume::lock(conn, TPCC)?;
    let started = resume::decide(conn, TPCC, &params, how)
        .map_err(PrepareError::from)
        .and_then(|start| match start {
            Start::Fresh => {
                if how.resume {
                    say("no unfinished load to resume: loading from the start\n");
                }
                fresh_tables(conn, opts, timed)?;
                resume::begin(conn, TPCC, &params)?;
                Ok(Record {
                    params: params.clone(),
                    ..Record::default()
                })
            }
            Start::Continue(record) => {
                say(&format!(
                    "resuming the load ({params}): {} of {} units loaded\n",
                    record.units.len(),
                    opts.warehouses + 1
                ));
                Ok(record)
            }
        })
        .and_then(|record| {
            if let Some(shard) = how.shard {
                resume::mark(conn, TPCC, &format!("shard {} started", shard.label()))?;
            }
            Ok(record)
        });
    let unlocked = resume::unlock(conn, TPCC);
    let record = started?;
    unlocked?;
    Ok(record)
}

/// Under the lock, after loading: whether this process runs the steps after the
/// load ([`resume::claim_build`]).
fn claim_build(conn: &mut Connection, opts: &TpccInit) -> Result<Option<Record>, PrepareError> {
    resume::lock(conn, TPCC)?;
    let units = Some(opts.warehouses as usize + 1);
    let claimed = resume::claim_build(conn, TPCC, opts.resumable, units);
    let unlocked = resume::unlock(conn, TPCC);
    let claimed = claimed?;
    unlocked?;
    Ok(claimed)
}

/// Keys and indexes: with a record, each in a transaction with its mark, and those
/// already marked skipped (a resume after a kill mid-build).
fn keys(
    conns: &mut [Connection],
    sql: &[String],
    record: Option<&Record>,
) -> Result<(), PrepareError> {
    let Some(record) = record else {
        return statements(conns, sql);
    };
    let left: Vec<String> = sql
        .iter()
        .filter(|s| !record.marked(&format!("done {s}")))
        .cloned()
        .collect();
    run_queue(conns, &left, None, no_setup, recorded_statement)
}

/// The queue's step before a connection's first item: none for TPC-C.
fn no_setup(_: &mut Connection) -> Result<(), PrepareError> {
    Ok(())
}

/// One statement and its mark, in one transaction.
fn recorded_statement(conn: &mut Connection, sql: &String, _: &Queue) -> Result<(), PrepareError> {
    execute(conn, "begin")?;
    execute(conn, sql)?;
    execute(conn, &resume::unit_sql(TPCC, &format!("=done {sql}"), ""))?;
    execute(conn, "commit")
}

/// Every table counted against what `warehouses` load; a line per table that
/// differs, and an error when one does.
fn self_check(conn: &mut Connection, warehouses: i32) -> Result<(), PrepareError> {
    let w = i64::from(warehouses);
    let per_district = i64::from(ORDERS);
    let lines: i64 = (1..=warehouses)
        .flat_map(|w| (1..=DISTRICTS).map(move |d| rows::line_counts(w, d).iter().sum::<i64>()))
        .sum();
    let districts = w * i64::from(DISTRICTS);
    let counts = [
        w,
        districts,
        districts * i64::from(CUSTOMERS),
        districts * i64::from(CUSTOMERS),
        districts * i64::from(ORDERS - FIRST_NEW_ORDER + 1),
        districts * per_district,
        lines,
        i64::from(ITEMS),
        w * i64::from(ITEMS),
    ];
    let expected: Vec<(String, i64)> = TABLES.iter().map(|t| t.to_string()).zip(counts).collect();
    let counted = resume::count_tables(conn, &expected)?;
    let lines = resume::count_lines(&counted);
    if lines.is_empty() {
        return Ok(());
    }
    for line in &lines {
        say(&format!("{line}\n"));
    }
    Err(PrepareError::Miscounted(lines.len()))
}

/// `verb TABLE` for every table.
fn per_table(verb: &str) -> Vec<String> {
    TABLES.iter().map(|t| format!("{verb} {t}")).collect()
}

/// The mode's routines, after dropping whichever either mode created before.
fn routines(conn: &mut Connection, opts: &TpccInit) -> Result<(), PrepareError> {
    say(if opts.procedures {
        "creating procedures...\n"
    } else {
        "creating functions...\n"
    });
    execute(conn, hammerdb_routines::DROP_ROUTINES)?;
    match opts.mode {
        Mode::Hammerdb => hammerdb_routines::create(opts.procedures)
            .iter()
            .try_for_each(|sql| execute(conn, sql)),
        Mode::Spec => execute(conn, spec_functions::FUNCTIONS),
    }
}

fn say(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().lock().write_all(text.as_bytes());
}

fn execute(conn: &mut Connection, sql: &str) -> Result<(), PrepareError> {
    conn.execute(sql).map_err(|e| PrepareError::Query {
        message: e.to_string(),
        sql: sql.to_string(),
    })
}

/// `g`: the units of the load over every connection, with pgbench's progress lines.
/// With a record: only this shard's units not yet loaded, each in a transaction with
/// its row of the record.
fn generate(
    conns: &mut [Connection],
    opts: &TpccInit,
    record: Option<&Record>,
) -> Result<(), PrepareError> {
    let how = opts.resumable;
    let warehouses: Vec<i32> = (1..=opts.warehouses).collect();
    let share = &warehouses[how.share(warehouses.len())];
    let jobs: Vec<Job> = how
        .loads_common_units()
        .then_some(Job::Items(opts.mode))
        .into_iter()
        .chain(share.iter().map(|&w| Job::Warehouse(w, opts.mode)))
        .filter(|job| record.is_none_or(|r| !r.units.contains(&job.name())))
        .collect();
    let rows = RowCount {
        total: jobs.iter().map(|j| j.rows()).sum(),
        quiet: opts.quiet,
    };
    if record.is_some() {
        let share = share.len() + usize::from(how.loads_common_units());
        crate::metrics::load::units(share - jobs.len(), share);
    }
    for job in &jobs {
        for (table, n) in TABLES.iter().zip(table_rows_of(job)) {
            crate::metrics::load::expect(table, n);
        }
    }
    let units_done = AtomicUsize::new(0);
    // A line per unit as it ends, from the connection's thread that loaded it.
    let work = |conn: &mut Connection, job: &Job, queue: &Queue| {
        let began = Instant::now();
        let bytes = match record {
            Some(_) => load_recorded(conn, job, queue)?,
            None => load(conn, job, queue)?,
        };
        let finished = units_done.fetch_add(1, Ordering::Relaxed) + 1;
        let line = unit_line(
            &job.name(),
            (job.rows(), bytes, began.elapsed().as_secs_f64()),
            (finished, jobs.len(), "units"),
            queue.elapsed(),
        );
        say(&line);
        Ok(())
    };
    run_queue(conns, &jobs, Some(rows), no_setup, work)
}

/// One unit in one transaction, its row of the record before the COMMIT; the bytes
/// of COPY data sent.
fn load_recorded(conn: &mut Connection, job: &Job, queue: &Queue) -> Result<u64, PrepareError> {
    execute(conn, "begin")?;
    let bytes = load(conn, job, queue)?;
    interrupted()?;
    execute(
        conn,
        &resume::unit_sql(TPCC, &job.name(), &job.rows().to_string()),
    )?;
    execute(conn, "commit")?;
    crate::metrics::load::unit_done();
    Ok(bytes)
}

/// Vacuum or keys: one statement per table, over the connections.
fn statements(conns: &mut [Connection], sql: &[String]) -> Result<(), PrepareError> {
    run_queue(conns, sql, None, no_setup, |conn, s, _| execute(conn, s))
}

/// Loads one unit; returns the bytes of COPY data sent.
fn load(conn: &mut Connection, job: &Job, queue: &Queue) -> Result<u64, PrepareError> {
    let bytes = std::cell::Cell::new(0u64);
    let sent = |data: &[u8]| bytes.set(bytes.get() + data.len() as u64);
    let copy = |conn: &mut Connection, table: usize, data: &[u8]| {
        copy_rows(conn, table, |c| {
            c.write(data).map_err(|e| copy_error(table, e))?;
            sent(data);
            let n = data.iter().filter(|&&b| b == b'\n').count() as i64;
            queue.rows(n);
            crate::metrics::load::rows(TABLES[table], n);
            Ok(())
        })
    };
    match *job {
        Job::Items(mode) => copy_rows(conn, 7, |c| {
            rows::items(mode, BATCH_ROWS, |data, n| {
                c.write(data).map_err(|e| copy_error(7, e))?;
                sent(data);
                queue.rows(i64::from(n));
                crate::metrics::load::rows(TABLES[7], i64::from(n));
                Ok(())
            })
        }),
        Job::Warehouse(w, mode) => {
            let (wh, ds) = rows::warehouse(w, mode);
            copy(conn, 0, &wh)?;
            copy(conn, 1, &ds)?;
            copy_rows(conn, 8, |c| {
                rows::stock(w, mode, BATCH_ROWS, |data, n| {
                    c.write(data).map_err(|e| copy_error(8, e))?;
                    sent(data);
                    queue.rows(i64::from(n));
                    crate::metrics::load::rows(TABLES[8], i64::from(n));
                    Ok(())
                })
            })?;
            for d in 1..=DISTRICTS {
                let (cs, hs) = rows::customers(w, d, mode);
                copy(conn, 2, &cs)?;
                copy(conn, 3, &hs)?;
                let o = rows::orders(w, d, mode);
                copy(conn, 5, &o.orders)?;
                copy(conn, 4, &o.new_orders)?;
                copy(conn, 6, &o.lines)?;
                interrupted()?;
            }
            Ok(())
        }
    }?;
    Ok(bytes.get())
}

/// A COPY into `TABLES[table]` failed (to start, to send, or at its end).
fn copy_error(table: usize, e: impl std::fmt::Display) -> PrepareError {
    PrepareError::Copy {
        table: TABLES[table].to_string(),
        message: e.to_string(),
    }
}

/// One COPY into `TABLES[table]`: `fill` writes the rows.
fn copy_rows(
    conn: &mut Connection,
    table: usize,
    fill: impl FnOnce(&mut pgbench_wire::CopyIn<'_>) -> Result<(), PrepareError>,
) -> Result<(), PrepareError> {
    let mut copy = conn
        .copy_in(COPY[table])
        .map_err(|e| copy_error(table, e))?;
    fill(&mut copy)?;
    copy.finish().map_err(|e| copy_error(table, e))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_total_counts_every_row_of_the_load() {
        let lines: i64 = (1..=10)
            .map(|d| rows::line_counts(1, d).iter().sum::<i64>())
            .sum();
        // items, warehouse, districts, stock, customers, history, orders, new orders, lines
        let want = 100_000 + 1 + 10 + 100_000 + 30_000 + 30_000 + 30_000 + 9_000 + lines;
        assert_eq!(total_rows(1), want);
    }
}
