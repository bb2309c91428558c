//! `-i --resume` and `-i --shard=K/N`: pgbench's tables loaded in units that commit
//! one by one, each with its row of the progress record ([`super::resume`]) in the
//! same transaction: branches and tellers together (the first shard's), then ranges
//! of [`UNIT_ROWS`] accounts (within one range partition each), dealt to the shards in
//! contiguous shares and loaded over `-j` connections. A load killed at any instant
//! has recorded exactly the units in the tables; `--resume` loads the others, and the
//! last process to finish its units runs the steps after the load (`v`, `p`, `f`)
//! once, each recorded when done, then counts every table against the scale.
//!
//! What differs from the stock path and why: rows committed unit by unit cannot use
//! `COPY ... FREEZE` (the table was not made in their transaction), so `v` sets their
//! hint bits where stock's rows come frozen; that is the cost of resuming (measured in
//! benches/README.md). Without either option `-i` is stock's single transaction.

use std::time::Instant;

use pgbench_wire::Connection;

use super::error::InitError;
use super::exec::{execute, say};
use super::load::small_tables;
use super::options::{InitOptions, PartitionMethod};
use super::parallel::{copy_accounts, flush_commits, Piece};
use super::queue::{run_queue, Queue, RowCount};
use super::resume::{self, Record, Start, PGBENCH};
use super::sql::{self, ACCOUNTS};
use super::steps::{Init, Side};

/// Accounts per unit: one scale's worth (about 13 MB), a second or so of loading, so
/// a kill loses little, and a record row per 100,000 rows costs nothing measurable.
pub(crate) const UNIT_ROWS: i64 = ACCOUNTS;

/// The name of the unit of branches and tellers.
const SMALL_TABLES: &str = "branches and tellers";

/// One unit of the load.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unit {
    /// `pgbench_branches` and `pgbench_tellers`, whole.
    SmallTables,
    /// A range of accounts.
    Accounts(Piece),
}

impl Unit {
    /// Its name in the record.
    pub(crate) fn name(&self) -> String {
        match self {
            Unit::SmallTables => SMALL_TABLES.to_string(),
            Unit::Accounts(p) => format!("accounts {}-{}", p.first, p.last),
        }
    }

    fn rows(&self) -> i64 {
        match self {
            Unit::SmallTables => 0,
            Unit::Accounts(p) => p.last - p.first + 1,
        }
    }
}

/// The parameters a resumed load must share with the load it continues.
pub(crate) fn params(opts: &InitOptions) -> String {
    let method = match opts.partition_method {
        PartitionMethod::None => "none",
        PartitionMethod::Range => "range",
        PartitionMethod::Hash => "hash",
    };
    format!(
        "scale {}, fillfactor {}, partitions {} ({method}), {}",
        opts.scale,
        opts.fillfactor,
        opts.partitions,
        if opts.unlogged_tables {
            "unlogged"
        } else {
            "logged"
        }
    )
}

/// Every accounts unit of the load, in `aid` order.
pub(crate) fn account_units(opts: &InitOptions) -> Vec<Piece> {
    super::parallel::pieces(opts, UNIT_ROWS)
}

/// The units this process loads: its shard's share, without those the record has.
pub(crate) fn to_load(opts: &InitOptions, record: &Record) -> Vec<Unit> {
    let how = opts.resumable;
    let accounts = account_units(opts);
    let share = how.share(accounts.len());
    how.loads_common_units()
        .then_some(Unit::SmallTables)
        .into_iter()
        .chain(accounts[share].iter().copied().map(Unit::Accounts))
        .filter(|u| !record.units.contains(&u.name()))
        .collect()
}

/// Every unit of the load (all shards').
fn unit_count(opts: &InitOptions) -> usize {
    1 + account_units(opts).len()
}

impl Init<'_> {
    /// The steps of a resumable load (see the module's header).
    pub(super) fn run_resumable(&mut self) -> Result<(), InitError> {
        let how = self.opts.resumable;
        let params = params(&self.opts);
        let steps = self.opts.steps.clone();
        let mut stats: Vec<String> = Vec::new();
        let mut run_time = 0.0;
        let mut timed = |op: &str, start: Instant| {
            let elapsed = start.elapsed().as_secs_f64();
            stats.push(format!("{op} {elapsed:.2} s"));
            run_time += elapsed;
        };

        let names: Vec<&str> = steps.chars().filter_map(super::steps::step_name).collect();
        crate::metrics::load::declare_steps(&names);
        resume::lock(&mut self.main, PGBENCH)?;
        let decided = resume::decide(&mut self.main, PGBENCH, &params, how);
        let record = match decided
            .map_err(InitError::from)
            .and_then(|start| self.start_or_continue(start, &params, &steps, &mut timed))
        {
            Ok(record) => record,
            Err(e) => {
                let _ = resume::unlock(&mut self.main, PGBENCH);
                return Err(e);
            }
        };
        resume::unlock(&mut self.main, PGBENCH)?;

        for (letter, side, op) in [
            ('g', Side::Client, "client-side generate"),
            ('G', Side::Server, "server-side generate"),
        ] {
            if steps.contains(letter) {
                let start = Instant::now();
                crate::metrics::load::step(op);
                self.load_units(side, &record)?;
                timed(op, start);
            }
        }

        resume::lock(&mut self.main, PGBENCH)?;
        let builder = self.claim_build();
        resume::unlock(&mut self.main, PGBENCH)?;
        let Some(record) = builder? else {
            let shard = how.shard.map(|s| s.label()).unwrap_or_default();
            say(&format!(
                "shard {shard} loaded its units; the last shard to finish runs the steps after the load\n"
            ));
            say(&format!(
                "done in {run_time:.2} s ({}).\n",
                stats.join(", ")
            ));
            return Ok(());
        };
        for (letter, op) in [
            ('v', "vacuum"),
            ('p', "primary keys"),
            ('f', "foreign keys"),
        ] {
            if !steps.contains(letter) || record.marked(&format!("step {letter}")) {
                continue;
            }
            let start = Instant::now();
            crate::metrics::load::step(op);
            match letter {
                'v' => self.vacuum()?,
                'p' => self.recorded(
                    "creating primary keys...\n",
                    'p',
                    sql::primary_keys(&self.opts),
                )?,
                _ => self.recorded(
                    "creating foreign keys...\n",
                    'f',
                    sql::FOREIGN_KEYS.iter().map(|s| s.to_string()).collect(),
                )?,
            }
            if letter == 'v' {
                resume::mark(&mut self.main, PGBENCH, "step v")?;
            }
            timed(op, start);
        }
        if steps.contains('g') || steps.contains('G') {
            self.self_check()?;
        }
        resume::finish(&mut self.main, PGBENCH)?;
        say(&format!(
            "done in {run_time:.2} s ({}).\n",
            stats.join(", ")
        ));
        Ok(())
    }

    /// Under the lock: a new load (dropped, created, recorded) or the one to continue;
    /// a shard says it joined.
    fn start_or_continue(
        &mut self,
        start: Start,
        params: &str,
        steps: &str,
        timed: &mut impl FnMut(&str, Instant),
    ) -> Result<Record, InitError> {
        let how = self.opts.resumable;
        let record = match start {
            Start::Fresh => {
                if how.resume {
                    say("no unfinished load to resume: loading from the start\n");
                }
                if steps.contains('d') {
                    let t = Instant::now();
                    crate::metrics::load::step("drop tables");
                    self.drop_tables()?;
                    timed("drop tables", t);
                }
                if steps.contains('t') {
                    let t = Instant::now();
                    crate::metrics::load::step("create tables");
                    self.create_tables()?;
                    timed("create tables", t);
                } else {
                    execute(&mut self.main, sql::TRUNCATE_TABLES)?;
                }
                resume::begin(&mut self.main, PGBENCH, params)?;
                Record {
                    params: params.to_string(),
                    ..Record::default()
                }
            }
            Start::Continue(record) => {
                say(&format!(
                    "resuming the load ({params}): {} of {} units loaded\n",
                    record.units.len(),
                    unit_count(&self.opts)
                ));
                record
            }
        };
        if let Some(shard) = how.shard {
            resume::mark(
                &mut self.main,
                PGBENCH,
                &format!("shard {} started", shard.label()),
            )?;
        }
        Ok(record)
    }

    /// Under the lock, after loading: records this shard as loaded and says whether
    /// this process runs the steps after the load (every unit is in, and no other
    /// shard took them), with the record as it is now.
    fn claim_build(&mut self) -> Result<Option<Record>, InitError> {
        let steps = &self.opts.steps;
        let loads = steps.contains('g') || steps.contains('G');
        let units = loads.then(|| unit_count(&self.opts));
        Ok(resume::claim_build(
            &mut self.main,
            PGBENCH,
            self.opts.resumable,
            units,
        )?)
    }

    /// `p` or `f`: the statements and the step's mark in one transaction, so a kill
    /// leaves the step done and recorded, or neither.
    fn recorded(
        &mut self,
        message: &str,
        step: char,
        statements: Vec<String>,
    ) -> Result<(), InitError> {
        say(message);
        execute(&mut self.main, "begin")?;
        for statement in &statements {
            execute(&mut self.main, statement)?;
        }
        execute(
            &mut self.main,
            &resume::unit_sql(PGBENCH, &format!("=step {step}"), ""),
        )?;
        execute(&mut self.main, "commit")
    }

    /// Counts every table against the scale; a line per table that differs, and an
    /// error when one does.
    fn self_check(&mut self) -> Result<(), InitError> {
        let scale = i64::from(self.opts.scale);
        let expected = [
            ("pgbench_branches", sql::BRANCHES * scale),
            ("pgbench_tellers", sql::TELLERS * scale),
            ("pgbench_accounts", sql::account_rows(self.opts.scale)),
            ("pgbench_history", 0),
        ]
        .map(|(t, n)| (t.to_string(), n));
        let counted = resume::count_tables(&mut self.main, &expected)?;
        let lines = resume::count_lines(&counted);
        if lines.is_empty() {
            return Ok(());
        }
        for line in &lines {
            say(&format!("{line}\n"));
        }
        Err(InitError::Miscounted(lines.len()))
    }

    /// `g` or `G` of the units this process loads, over one connection or `-j`.
    fn load_units(&mut self, side: Side, record: &Record) -> Result<(), InitError> {
        say(match side {
            Side::Client => "generating data (client-side)...\n",
            Side::Server => "generating data (server-side)...\n",
        });
        let units = to_load(&self.opts, record);
        let share = to_load(&self.opts, &Record::default()).len();
        crate::metrics::load::units(share - units.len(), share);
        for unit in &units {
            let rows = match unit {
                Unit::SmallTables => {
                    let [branches, tellers, _] = sql::table_rows(self.opts.scale);
                    [branches, tellers, 0]
                }
                Unit::Accounts(p) => [0, 0, p.last - p.first + 1],
            };
            let tables = [sql::BRANCHES_TABLE, sql::TELLERS_TABLE, sql::ACCOUNTS_TABLE];
            for (table, n) in tables.into_iter().zip(rows) {
                crate::metrics::load::expect(table, n);
            }
        }
        let width = self
            .opts
            .parallel_jobs()
            .unwrap_or(1)
            .min(units.len())
            .max(1);
        let rows = RowCount {
            total: units.iter().map(Unit::rows).sum(),
            quiet: self.opts.quiet,
        };
        let opts = self.opts.clone();
        let (main, helpers) = self.connections(width)?;
        run_queue(
            std::iter::once(main).chain(helpers),
            &units,
            Some(rows),
            flush_commits,
            |conn, unit, queue| load_unit(conn, unit, side, &opts, queue),
        )
    }
}

/// One unit in one transaction, its record row before the COMMIT.
fn load_unit(
    conn: &mut Connection,
    unit: &Unit,
    side: Side,
    opts: &InitOptions,
    queue: &Queue,
) -> Result<(), InitError> {
    execute(conn, "begin")?;
    // An asynchronous commit is as atomic as any: a crash loses the last units whole,
    // rows and record row together, and a resume loads them again; the load does not
    // wait for a WAL flush per unit. The synchronous commit of the `=build` mark
    // flushes them all before `v` (which needs them flushed to set hint bits).
    execute(conn, "set local synchronous_commit = off")?;
    match (unit, side) {
        (Unit::SmallTables, Side::Client) => small_tables(conn, opts.scale)?,
        (Unit::SmallTables, Side::Server) => {
            let [branches, tellers, _] = sql::server_side_inserts(opts.scale);
            let [branch_rows, teller_rows, _] = sql::table_rows(opts.scale);
            execute(conn, &branches)?;
            crate::metrics::load::rows(sql::BRANCHES_TABLE, branch_rows);
            execute(conn, &tellers)?;
            crate::metrics::load::rows(sql::TELLERS_TABLE, teller_rows);
        }
        (Unit::Accounts(p), Side::Server) => {
            execute(conn, &sql::server_side_accounts(p.first, p.last))?;
            queue.rows(p.last - p.first + 1);
            crate::metrics::load::rows(sql::ACCOUNTS_TABLE, p.last - p.first + 1);
        }
        (Unit::Accounts(p), Side::Client) => copy_accounts(conn, p, queue, false)?,
    }
    super::interrupt::check()?;
    execute(
        conn,
        &resume::unit_sql(PGBENCH, &unit.name(), &unit.rows().to_string()),
    )?;
    execute(conn, "commit")?;
    crate::metrics::load::unit_done();
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::init::resume::{Resumable, Shard};

    fn opts(scale: i32, shard: Option<(u32, u32)>) -> InitOptions {
        InitOptions {
            scale,
            resumable: Resumable {
                resume: shard.is_none(),
                shard: shard.map(|(index, count)| Shard { index, count }),
            },
            ..InitOptions::default()
        }
    }

    #[test]
    fn shards_share_the_accounts_and_the_first_loads_the_small_tables() {
        let none = Record::default();
        let first = to_load(&opts(4, Some((1, 2))), &none);
        let second = to_load(&opts(4, Some((2, 2))), &none);
        assert_eq!(first[0], Unit::SmallTables);
        assert_eq!(first.len(), 3);
        assert_eq!(second.len(), 2);
        assert_eq!(second[0].name(), "accounts 200001-300000");
        assert_eq!(
            to_load(&opts(4, None), &none).len(),
            unit_count(&opts(4, None))
        );
    }

    #[test]
    fn a_resume_skips_the_units_recorded() {
        let mut record = Record::default();
        record.units.insert(SMALL_TABLES.to_string());
        record.units.insert("accounts 100001-200000".to_string());
        let left: Vec<String> = to_load(&opts(3, None), &record)
            .iter()
            .map(Unit::name)
            .collect();
        assert_eq!(left, ["accounts 1-100000", "accounts 200001-300000"]);
    }

    #[test]
    fn the_parameters_name_what_changes_the_rows_or_the_tables() {
        assert_eq!(
            params(&opts(20, None)),
            "scale 20, fillfactor 100, partitions 0 (none), logged"
        );
        let mut o = opts(20, None);
        o.partitions = 3;
        o.partition_method = PartitionMethod::Range;
        let units = account_units(&o);
        assert_eq!(units.len(), 21); // each partition's range ends a unit
        assert_eq!(
            units.iter().map(|p| p.last - p.first + 1).sum::<i64>(),
            2_000_000
        );
    }
}
