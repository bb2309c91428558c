//! The steps of `-i` (`dtgGvpf`), run in the order given on the main connection or,
//! for the data load, vacuum and primary keys with `jobs` > 1, over several
//! (`parallel`); each says what it does as pgbench does, and the run ends with
//! pgbench's `done in ...` line.

use std::time::Instant;

use pgbench_wire::{ConnectOptions, Connection};

use super::error::InitError;
use super::exec::{connect, execute, say};
use super::options::InitOptions;
use super::{load, parallel, sql};

/// Where `g` and `G` generate the rows.
#[derive(Clone, Copy)]
pub(super) enum Side {
    /// `g`: here, sent with COPY.
    Client,
    /// `G`: by the server, with `generate_series`.
    Server,
}

/// The state of one `-i` run.
pub(super) struct Init<'a> {
    pub(super) opts: InitOptions,
    pub(super) connect: &'a ConnectOptions,
    /// The connection every step uses (pgbench's only one).
    pub(super) main: Connection,
    /// Extra connections for `jobs` > 1, opened by the first parallel step.
    pub(super) helpers: Vec<Connection>,
}

/// A step's name in the `done in ...` line (and the metrics' `step` label); `None`
/// for a letter that is no step.
pub(super) fn step_name(step: char) -> Option<&'static str> {
    Some(match step {
        'd' => "drop tables",
        't' => "create tables",
        'g' => "client-side generate",
        'G' => "server-side generate",
        'v' => "vacuum",
        'p' => "primary keys",
        'f' => "foreign keys",
        _ => return None,
    })
}

impl Init<'_> {
    pub(super) fn run_steps(&mut self) -> Result<(), InitError> {
        if self.opts.resumable.active() {
            return self.run_resumable();
        }
        let steps: Vec<char> = self.opts.steps.chars().collect();
        crate::metrics::load::declare_steps(
            &steps
                .iter()
                .filter_map(|&c| step_name(c))
                .collect::<Vec<_>>(),
        );
        let mut stats = Vec::new();
        let mut run_time = 0.0;
        for step in steps {
            let start = Instant::now();
            let op = match (step, step_name(step)) {
                (' ', _) => continue,
                (other, None) => return Err(InitError::UnknownStep(other)),
                (_, Some(op)) => op,
            };
            crate::metrics::load::step(op);
            match step {
                'd' => self.drop_tables()?,
                't' => self.create_tables()?,
                'g' => self.generate(Side::Client)?,
                'G' => self.generate(Side::Server)?,
                'v' => self.vacuum()?,
                'p' => self.primary_keys()?,
                _ => self.foreign_keys()?,
            }
            let elapsed = start.elapsed().as_secs_f64();
            stats.push(format!("{op} {elapsed:.2} s"));
            run_time += elapsed;
        }
        say(&format!(
            "done in {run_time:.2} s ({}).\n",
            stats.join(", ")
        ));
        Ok(())
    }

    pub(super) fn drop_tables(&mut self) -> Result<(), InitError> {
        say("dropping old tables...\n");
        execute(&mut self.main, sql::DROP_TABLES)?;
        // An unfinished resumable load went with its tables.
        Ok(super::resume::finish(
            &mut self.main,
            super::resume::PGBENCH,
        )?)
    }

    pub(super) fn create_tables(&mut self) -> Result<(), InitError> {
        say("creating tables...\n");
        for statement in sql::create_tables(&self.opts) {
            execute(&mut self.main, &statement)?;
        }
        if self.opts.partitions > 0 {
            say(&format!(
                "creating {} partitions...\n",
                self.opts.partitions
            ));
            for statement in sql::create_partitions(&self.opts) {
                execute(&mut self.main, &statement)?;
            }
        }
        Ok(())
    }

    /// `g` or `G`: the rows generated on this side, over one connection or `jobs`.
    fn generate(&mut self, side: Side) -> Result<(), InitError> {
        let tables = [sql::BRANCHES_TABLE, sql::TELLERS_TABLE, sql::ACCOUNTS_TABLE];
        for (table, rows) in tables.into_iter().zip(sql::table_rows(self.opts.scale)) {
            crate::metrics::load::expect(table, rows);
        }
        say(match side {
            Side::Client => "generating data (client-side)...\n",
            Side::Server => "generating data (server-side)...\n",
        });
        // The tables are emptied and loaded again: an unfinished resumable load's
        // record no longer describes them.
        super::resume::finish(&mut self.main, super::resume::PGBENCH)?;
        let Some(jobs) = self.opts.parallel_jobs() else {
            return match side {
                Side::Client => load::client_side(&mut self.main, &self.opts),
                Side::Server => load::server_side(&mut self.main, &self.opts),
            };
        };
        let width = jobs.min(parallel::plan(&self.opts, jobs).len());
        let opts = self.opts.clone();
        let (main, helpers) = self.connections(width)?;
        let loaded = match side {
            Side::Client => parallel::client_side(main, helpers, &opts),
            Side::Server => parallel::server_side(main, helpers, &opts),
        };
        self.empty_after_failure(loaded)
    }

    /// A parallel load commits piece by piece; when it fails or is interrupted, the
    /// tables are emptied again, as a one-session load leaves them (its one
    /// transaction rolls back), rather than left half-loaded.
    fn empty_after_failure(&mut self, loaded: Result<(), InitError>) -> Result<(), InitError> {
        if loaded.is_err() && execute(&mut self.main, sql::TRUNCATE_TABLES).is_ok() {
            say("the load did not complete: the pgbench tables were emptied again\n");
        }
        loaded
    }

    pub(super) fn vacuum(&mut self) -> Result<(), InitError> {
        say("vacuuming...\n");
        // After a parallel load the accounts rows are not frozen as pgbench's COPY FREEZE
        // leaves them; `vacuum (freeze)` here would rewrite the table with full-page
        // images and cost more than the parallel load saves (docs/init.md), so this is
        // pgbench's statement in every case.
        let statements: Vec<String> = sql::VACUUM_TABLES
            .iter()
            .map(|table| format!("vacuum analyze {table}"))
            .collect();
        match self.opts.parallel_jobs() {
            Some(jobs) => {
                // Three small tables plus accounts or each of its partitions.
                let width = jobs.min(3 + self.opts.partitions.max(1) as usize);
                let (main, helpers) = self.connections(width)?;
                parallel::vacuum(main, helpers, statements)
            }
            None => self.maintenance(statements),
        }
    }

    fn primary_keys(&mut self) -> Result<(), InitError> {
        say("creating primary keys...\n");
        self.maintenance(sql::primary_keys(&self.opts))
    }

    fn foreign_keys(&mut self) -> Result<(), InitError> {
        say("creating foreign keys...\n");
        // Each constraint locks pgbench_branches or pgbench_tellers against the others,
        // so running them concurrently would only queue them: always one connection.
        for statement in sql::FOREIGN_KEYS {
            execute(&mut self.main, statement)?;
        }
        Ok(())
    }

    /// Runs independent per-table statements: in order on the main connection, or
    /// concurrently over the `jobs` connections.
    fn maintenance(&mut self, statements: Vec<String>) -> Result<(), InitError> {
        match self.opts.parallel_jobs() {
            Some(jobs) => {
                let (main, helpers) = self.connections(jobs.min(statements.len()))?;
                parallel::statements(main, helpers, statements)
            }
            None => {
                for statement in &statements {
                    execute(&mut self.main, statement)?;
                }
                Ok(())
            }
        }
    }

    /// `width` connections for a parallel step: the main one and `width - 1` helpers,
    /// opened the first time they are needed and kept for later steps.
    pub(super) fn connections(
        &mut self,
        width: usize,
    ) -> Result<(&mut Connection, &mut [Connection]), InitError> {
        let helpers = width.max(1) - 1;
        while self.helpers.len() < helpers {
            self.helpers.push(connect(self.connect)?);
        }
        Ok((&mut self.main, &mut self.helpers[..helpers]))
    }
}
