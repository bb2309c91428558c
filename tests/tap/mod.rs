//! pgbench's own `src/bin/pgbench/t/001_pgbench_with_server.pl`, case by case, against
//! a throwaway cluster. Upstream runs everything in one database, one case after
//! another; here each case is a test of its own. Cases that leave the tables' shape
//! alone share one database initialised once ([`bench_db`]); cases that create or
//! drop tables get their own.
//!
//! The cases are those of the upstream file as of pgbench 16 (15's lacks only
//! `\startpipeline` with serializable transactions, which stock 15.18 passes too), plus
//! "pgbench progress" with aggregated logs from earlier versions of the file. Setting
//! `PGBENCH_TAP_STOCK=1` runs the same expectations against stock pgbench 15.20, which
//! is how they were checked. A case keeps its upstream name in [`Case::name`], so it can
//! be found in the `.pl` file; the modules follow the file's order:
//!
//! | upstream cases | module |
//! |---|---|
//! | concurrent OID generation | [`custom`] |
//! | no such database, run without init | [`builtin`] |
//! | pgbench scale 1 initialization (twice), pgbench --init-steps | [`init`] |
//! | pgbench tpcb-like, simple update, select only | [`builtin`] |
//! | pgbench custom scripts, pgbench custom script (simple, extended) | [`custom`] |
//! | server parameter logging | [`server_logging`] |
//! | pgbench expressions, random seeded | [`expressions`] |
//! | pgbench backslash commands | [`custom`] |
//! | pgbench gset / aset command | [`gset`] |
//! | working `\startpipeline` and its errors | [`pipeline`] |
//! | pgbench script error: ... (the `@errors` table) | [`script_errors`] |
//! | pgbench (late) throttling | [`throttling`] |
//! | pgbench logs, logs contents, progress | [`logs`] |
//! | incomplete transaction block | [`custom`] |
//! | concurrent update / deadlock with retrying | [`retries`] |

mod builtin; // the builtin scripts, and runs that fail before a script starts
mod custom; // -f scripts, their weights and backslash commands, several clients at once
mod expressions; // the debug() expression script and seeded random values
mod gset; // \gset and \aset
mod init; // -i with its options and --init-steps
mod logs; // -l logs: sampled, contents, aggregated with -P
mod pipeline; // \startpipeline / \endpipeline and their errors
mod retries; // --max-tries after serialization failures and deadlocks
mod script_errors; // the table of scripts that fail to load or abort their client
mod server_logging; // the server's logging of query parameters
mod throttling; // --rate with --latency-limit

use std::process::Command;
use std::sync::OnceLock;

use crate::support::pattern::assert_like;
use crate::support::{fresh_db, run, Db, Run};

/// The program under test aimed at `db`: pgbench-rs, or stock pgbench with
/// `PGBENCH_TAP_STOCK` (see [`crate::support::tap_stock`]).
fn program(db: &Db) -> Command {
    if crate::support::tap_stock() {
        db.stock()
    } else {
        db.ours()
    }
}

/// The database initialised once (scale 1) for the cases that need pgbench's tables
/// but do not change their shape.
fn bench_db() -> &'static Db {
    static DB: OnceLock<Db> = OnceLock::new();
    DB.get_or_init(|| {
        let db = fresh_db("tap_bench");
        db.init(1);
        db
    })
}

/// One upstream `$node->pgbench(...)` call: options, expected status, patterns for
/// stdout and stderr, script files (name → contents; a name may end in `@weight`),
/// more arguments after the files, and environment variables.
#[derive(Default)]
struct Case<'a> {
    name: &'a str,
    opts: &'a str,
    status: i32,
    stdout: &'a [&'a str],
    stderr: &'a [&'a str],
    files: &'a [(&'a str, &'a str)],
    extra: &'a [&'a str],
    env: &'a [(&'a str, &'a str)],
}

impl Case<'_> {
    /// Runs the case on `db` and checks it as `command_checks_all` does; the run is
    /// returned for further checks.
    fn check(&self, db: &Db) -> Run {
        let dir = tempfile::tempdir().expect("temp dir");
        let mut cmd = program(db);
        cmd.args(self.opts.split_whitespace());
        let mut files: Vec<&(&str, &str)> = self.files.iter().collect();
        files.sort_by_key(|(name, _)| *name);
        for (name, contents) in files {
            let file = name.rsplit_once('@').map_or(*name, |(f, _)| f);
            std::fs::write(dir.path().join(file), contents).expect("write script");
            cmd.arg("-f").arg(dir.path().join(name));
        }
        cmd.args(self.extra);
        for (k, v) in self.env {
            cmd.env(k, v);
        }
        let out = run(&mut cmd);
        assert_eq!(
            out.code, self.status,
            "{}: exit status\n--- stdout:\n{}--- stderr:\n{}",
            self.name, out.stdout, out.stderr
        );
        assert_like(&out.stdout, self.stdout, &format!("{}: stdout", self.name));
        assert_like(&out.stderr, self.stderr, &format!("{}: stderr", self.name));
        out
    }
}
