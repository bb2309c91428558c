//! The helpers every module of the integration tests shares: a fresh database on the
//! throwaway cluster, commands for pgbench-rs and stock pgbench pointed at it, the
//! choice of program for the TAP ports, the normalisation that masks only what depends
//! on timing; in [`pattern`] the TAP tests' Perl patterns, in [`browser`] a results page
//! as Chromium draws it.

pub mod browser;
pub mod netns;
pub mod pattern;

use pgbench_cluster::Cluster;
use std::path::PathBuf;
use std::process::{Command, Output, Stdio};

/// What sysbench 1.0.20 printed of a short `oltp_read_write` run (2 threads, 1,799
/// transactions, 7 ignored errors, p95 12.98 ms): what the importers read.
pub const SYSBENCH_OUTPUT: &str = "sysbench 1.0.20 (using system LuaJIT 2.1.0-beta3)\n\n\
         Running the test with following options:\nNumber of threads: 2\n\n\
         SQL statistics:\n    transactions:                        1799   (358.46 per sec.)\n\
         \x20   ignored errors:                      7      (1.39 per sec.)\n\n\
         General statistics:\n    total time:                          5.0181s\n\n\
         Latency (ms):\n         min:                                    0.57\n\
         \x20        avg:                                    5.56\n\
         \x20        max:                                 1024.50\n\
         \x20        95th percentile:                       12.98\n";

/// A database of its own on the shared test cluster.
pub struct Db {
    pub cluster: &'static Cluster,
    pub name: String,
}

/// Held by a test that opens more than 100 connections at once, so that two such
/// tests never run together on the shared cluster (its `max_connections` is 600: 384
/// clients and 256 would not fit).
pub fn many_connections() -> std::sync::MutexGuard<'static, ()> {
    static MANY: std::sync::Mutex<()> = std::sync::Mutex::new(());
    MANY.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A fresh, empty database named after the test.
pub fn fresh_db(test: &str) -> Db {
    let cluster = pgbench_cluster::shared();
    let name = cluster.fresh_database(test).expect("create database");
    Db { cluster, name }
}

impl Db {
    /// Runs SQL with psql; its unaligned output.
    pub fn psql(&self, sql: &str) -> String {
        self.cluster
            .psql(&self.name, sql)
            .unwrap_or_else(|e| panic!("psql failed: {e}"))
    }

    /// A single value.
    pub fn value(&self, sql: &str) -> String {
        self.psql(sql).trim().to_string()
    }

    /// The value of `sql` once it is `want`, asked again every 50 ms; after `timeout`,
    /// whatever it is then.
    pub fn value_within(&self, sql: &str, want: &str, timeout: std::time::Duration) -> String {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let value = self.value(sql);
            if value == want || std::time::Instant::now() > deadline {
                return value;
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }

    /// Waits until no backend of a run is left on this database: a client's backend
    /// exits after the client has gone, and on a busy machine hundreds of them can
    /// still hold their connection slots when the next run starts connecting (then
    /// refused with "too many clients"). Panics after 60 s, with how many are left.
    pub fn wait_for_no_backends(&self) {
        let sql = format!(
            "select count(*) from pg_stat_activity where datname = '{}' and pid <> pg_backend_pid()",
            self.name
        );
        let left = self.value_within(&sql, "0", std::time::Duration::from_secs(60));
        assert_eq!(
            left, "0",
            "backends of {} still there after 60 s",
            self.name
        );
    }

    /// A new empty directory beside the cluster's data directory, owned by the server's
    /// user (as `CREATE TABLESPACE` requires).
    pub fn server_owned_dir(&self, name: &str) -> PathBuf {
        use std::os::unix::fs::MetadataExt;
        let owner = std::fs::metadata(self.cluster.data_dir()).expect("data directory");
        let dir = self
            .cluster
            .socket_dir()
            .join(format!("{}_{name}", self.name));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir(&dir).expect("create directory");
        std::os::unix::fs::chown(&dir, Some(owner.uid()), Some(owner.gid())).expect("chown");
        dir
    }

    /// Initialises the standard tables with stock pgbench (quietly).
    pub fn init(&self, scale: u32) {
        let out = self
            .stock()
            .args(["-i", "-q", "-s", &scale.to_string()])
            .output()
            .expect("run stock pgbench -i");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// pgbench-rs aimed at this database through PGHOST/PGPORT/PGUSER/PGDATABASE.
    pub fn ours(&self) -> Command {
        self.target(Command::new(env!("CARGO_BIN_EXE_pgbench-rs")))
    }

    /// Stock pgbench with the same target.
    pub fn stock(&self) -> Command {
        self.target(Command::new(stock_pgbench()))
    }

    fn target(&self, mut cmd: Command) -> Command {
        aim(&mut cmd, self.cluster, &self.name);
        cmd
    }
}

/// Points a command at `db` on `cluster` through PGHOST/PGPORT/PGUSER/PGDATABASE,
/// with every other PG* variable of the test's environment removed.
pub fn aim(cmd: &mut Command, cluster: &Cluster, db: &str) {
    for (k, _) in std::env::vars() {
        if k.starts_with("PG") {
            cmd.env_remove(k);
        }
    }
    cmd.env("PGHOST", cluster.socket_dir())
        .env("PGPORT", cluster.port().to_string())
        .env("PGUSER", cluster.user())
        .env("PGDATABASE", db)
        .stdin(Stdio::null());
}

/// A session of psql holding a table's lock (`mode`) until dropped: its statement
/// then ends with psql, and its backend, which would sleep on holding the lock, is
/// terminated.
pub struct LockHolder<'a> {
    db: &'a Db,
    psql: std::process::Child,
}

impl<'a> LockHolder<'a> {
    /// Locks `table` in `mode` (as `LOCK TABLE` spells it) and waits until the lock is
    /// granted (a condition, not a sleep: on a loaded machine psql may take longer to
    /// lock than what it is to hold takes to pass).
    pub fn lock(db: &'a Db, table: &str, mode: &str) -> LockHolder<'a> {
        let mut psql = Command::new("psql");
        aim(&mut psql, db.cluster, &db.name);
        let psql = psql
            .args(["-X", "-q", "-c"])
            .arg(format!(
                "begin; lock table {table} in {mode} mode; select pg_sleep(600) /* lock holder */"
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("run psql");
        let held = format!(
            "select count(*) > 0 from pg_locks where relation = '{table}'::regclass and granted \
             and pid in (select pid from pg_stat_activity where query like '%/* lock holder */')"
        );
        assert_eq!(
            db.value_within(&held, "t", std::time::Duration::from_secs(30)),
            "t",
            "{table} not locked"
        );
        LockHolder { db, psql }
    }
}

impl Drop for LockHolder<'_> {
    fn drop(&mut self) {
        let _ = self.psql.kill();
        let _ = self.psql.wait();
        self.db.value(
            "select count(pg_terminate_backend(pid)) from pg_stat_activity \
              where datname = current_database() and query like '%/* lock holder */' \
                and pid <> pg_backend_pid()",
        );
    }
}

/// A running child's stderr, read as it comes on a thread of its own: a test waits for
/// the line that shows the child reached the state it wants to act in (a progress
/// line, a phase's message) instead of sleeping and hoping it got there.
pub struct StderrWatch {
    lines: std::sync::mpsc::Receiver<String>,
    reader: std::thread::JoinHandle<String>,
}

impl StderrWatch {
    /// Takes the child's piped stderr.
    pub fn new(child: &mut std::process::Child) -> StderrWatch {
        StderrWatch::reading(child.stderr.take().expect("stderr piped"))
    }

    /// The same for the child's piped stdout (where sysbench's prepare, and so a
    /// workload's, says how far it got).
    pub fn stdout(child: &mut std::process::Child) -> StderrWatch {
        StderrWatch::reading(child.stdout.take().expect("stdout piped"))
    }

    fn reading(stream: impl std::io::Read + Send + 'static) -> StderrWatch {
        use std::io::BufRead;
        let (tx, lines) = std::sync::mpsc::channel();
        let reader = std::thread::spawn(move || {
            let mut all = String::new();
            for line in std::io::BufReader::new(stream)
                .lines()
                .map_while(Result::ok)
            {
                all.push_str(&line);
                all.push('\n');
                let _ = tx.send(line);
            }
            all
        });
        StderrWatch { lines, reader }
    }

    /// Waits for a line containing `text`; panics with what came if the child ended
    /// its stderr first or `timeout` passed.
    pub fn wait_for(&self, text: &str, timeout: std::time::Duration) -> String {
        let deadline = std::time::Instant::now() + timeout;
        let mut seen = String::new();
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(text) => return line,
                Ok(line) => {
                    seen.push_str(&line);
                    seen.push('\n');
                }
                Err(e) => panic!("no line with {text:?} ({e:?}); stderr so far:\n{seen}"),
            }
        }
    }

    /// All the child wrote to stderr, once it has ended it.
    pub fn finish(self) -> String {
        self.reader.join().expect("stderr reader")
    }
}

/// A test that cannot run here (a tool or a right it needs is missing): under
/// `CI=true` that fails it; elsewhere it says `skipped: WHY` on the terminal. Written
/// to stderr itself, not through `eprintln!`, which the test harness captures and
/// shows only for a failing test: the skip would pass unseen.
pub fn skip(why: &str) {
    use std::io::Write;
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "{why} (CI=true: a missing tool fails the test)"
    );
    let _ = writeln!(std::io::stderr(), "skipped: {why}");
}

/// Whether the TAP ports (`cli`, `tap`) run stock pgbench instead of pgbench-rs:
/// `PGBENCH_TAP_STOCK=1` checks their expectations themselves against the original.
pub fn tap_stock() -> bool {
    std::env::var_os("PGBENCH_TAP_STOCK").is_some()
}

/// Stock pgbench: the server's bindir, else PATH.
pub fn stock_pgbench() -> PathBuf {
    let bindir = pgbench_cluster::bindir().expect("PostgreSQL binaries");
    let p = bindir.join("pgbench");
    if p.is_file() {
        p
    } else {
        PathBuf::from("pgbench")
    }
}

/// What a run printed and how it ended.
#[derive(Debug)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

pub fn run(cmd: &mut Command) -> Run {
    let Output {
        status,
        stdout,
        stderr,
    } = cmd.output().expect("run command");
    Run {
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
        code: status.code().unwrap_or(-1),
    }
}

fn mask_numbers(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut in_num = false;
    for c in line.chars() {
        if c.is_ascii_digit() || (in_num && c == '.') {
            if !in_num {
                out.push('N');
                in_num = true;
            }
        } else {
            in_num = false;
            out.push(c);
        }
    }
    out
}

/// Masks what differs between any two runs of the same job of counted transactions
/// (`-t`): the program name and version, and the numbers of timing lines (all counts
/// stay exact).
pub fn normalize(text: &str) -> String {
    mask(text, false)
}

/// [`normalize`] for a timed run (`-T`), where the counts depend on timing too.
pub fn normalize_timed(text: &str) -> String {
    mask(text, true)
}

fn mask(text: &str, timed_run: bool) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let mut l = line.to_string();
        // The Debian wrapper runs /usr/lib/postgresql/NN/bin/pgbench; ours is pgbench-rs.
        for prefix in ["pgbench-rs: ", "pgbench: "] {
            if let Some(i) = l.find(prefix) {
                if !l[..i].contains(' ') {
                    l = format!("pgbench: {}", &l[i + prefix.len()..]);
                }
            }
        }
        if l.starts_with("pgbench (") {
            l = "pgbench (<version>)".to_string();
        }
        let timing = [
            "latency average",
            "latency stddev",
            "initial connection time",
            "tps = ",
            "progress: ",
            "rate limit schedule lag",
            "average connection time",
            " - latency average",
            " - latency stddev",
        ];
        let is_command_latency =
            l.starts_with("   ") && l.trim_start().starts_with(|c: char| c.is_ascii_digit());
        if let Some(i) = l.find("tps = ").filter(|_| l.starts_with(" - ")) {
            // A script's share of the transactions is exact; its tps is timing.
            l = format!("{}{}", &l[..i], mask_numbers(&l[i..]));
        }
        if timing.iter().any(|t| l.starts_with(t)) {
            l = mask_numbers(&l);
        } else if is_command_latency {
            // Only the latency column is timing; failures and retries are counts.
            let trimmed = l.trim_start();
            let end = trimmed.find(' ').unwrap_or(trimmed.len());
            l = format!("   <latency>{}", &trimmed[end..]);
        } else if timed_run
            && (l.starts_with("number of transactions actually processed")
                || l.starts_with("number of transactions above")
                || l.starts_with("number of transactions skipped")
                || l.starts_with(" - ")
                || l.starts_with("number of failed")
                || l.starts_with("number of serialization")
                || l.starts_with("number of deadlock")
                || l.starts_with("number of transactions retried")
                || l.starts_with("total number of retries"))
        {
            l = mask_numbers(&l);
        }
        out.push_str(&l);
        out.push('\n');
    }
    out
}

/// Writes a script into a temp dir that lives as long as the returned guard.
pub fn script_file(dir: &tempfile::TempDir, name: &str, text: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, text).expect("write script");
    path.display().to_string()
}

/// A merge's stderr says nothing is missing or cut short. Workers sharing 2 cores with
/// other tests may differ enough to flag one as saturated: a warning, not a failure.
pub fn assert_merge_complete(stderr: &str) {
    for line in stderr.lines() {
        assert!(
            line.contains("is its client machine saturated?"),
            "{stderr}"
        );
    }
}

/// The transactions of a results file's per-second series, added up.
pub fn series_transactions(doc: &serde_json::Value) -> i64 {
    doc["run"]["series"]
        .as_array()
        .expect("a series")
        .iter()
        .map(|s| s["cnt"].as_i64().expect("a count"))
        .sum()
}
