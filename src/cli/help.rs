//! The `--help` and `--version` texts. pgbench 15.20's usage text, line for line, with
//! pgbench-rs's own options in a section of their own before the bug-report lines.

/// `--version` output (stdout).
pub fn version_text() -> String {
    format!("pgbench (PostgreSQL) {}\n", crate::version::pg_version())
}

/// `--help` output (stdout): stock's text with our section before its last lines
/// (the workloads named by their registry).
pub fn usage_text(progname: &str) -> String {
    let ours = OUR_OPTIONS.replace("{workloads}", &crate::workload::help_list());
    format!(
        "{progname} is a benchmarking tool for PostgreSQL.\n\n\
         Usage:\n  {progname} [OPTION]... [DBNAME]\n\n\
         {STOCK_OPTIONS}{ours}{BUG_REPORTS}"
    )
}

/// pgbench 15.20's option sections, as it prints them.
const STOCK_OPTIONS: &str = r#"Initialization options:
  -i, --initialize         invokes initialization mode
  -I, --init-steps=[dtgGvpf]+ (default "dtgvp")
                           run selected initialization steps
  -F, --fillfactor=NUM     set fill factor
  -n, --no-vacuum          do not run VACUUM during initialization
  -q, --quiet              quiet logging (one message each 5 seconds)
  -s, --scale=NUM          scaling factor
  --foreign-keys           create foreign key constraints between tables
  --index-tablespace=TABLESPACE
                           create indexes in the specified tablespace
  --partition-method=(range|hash)
                           partition pgbench_accounts with this method (default: range)
  --partitions=NUM         partition pgbench_accounts into NUM parts (default: 0)
  --tablespace=TABLESPACE  create tables in the specified tablespace
  --unlogged-tables        create tables as unlogged tables

Options to select what to run:
  -b, --builtin=NAME[@W]   add builtin script NAME weighted at W (default: 1)
                           (use "-b list" to list available scripts)
  -f, --file=FILENAME[@W]  add script FILENAME weighted at W (default: 1)
  -N, --skip-some-updates  skip updates of pgbench_tellers and pgbench_branches
                           (same as "-b simple-update")
  -S, --select-only        perform SELECT-only transactions
                           (same as "-b select-only")

Benchmarking options:
  -c, --client=NUM         number of concurrent database clients (default: 1)
  -C, --connect            establish new connection for each transaction
  -D, --define=VARNAME=VALUE
                           define variable for use by custom script
  -j, --jobs=NUM           number of threads (default: 1)
  -l, --log                write transaction times to log file
  -L, --latency-limit=NUM  count transactions lasting more than NUM ms as late
  -M, --protocol=simple|extended|prepared
                           protocol for submitting queries (default: simple)
  -n, --no-vacuum          do not run VACUUM before tests
  -P, --progress=NUM       show thread progress report every NUM seconds
  -r, --report-per-command report latencies, failures, and retries per command
  -R, --rate=NUM           target rate in transactions per second
  -s, --scale=NUM          report this scale factor in output
  -t, --transactions=NUM   number of transactions each client runs (default: 10)
  -T, --time=NUM           duration of benchmark test in seconds
  -v, --vacuum-all         vacuum all four standard tables before tests
  --aggregate-interval=NUM aggregate data over NUM seconds
  --failures-detailed      report the failures grouped by basic types
  --log-prefix=PREFIX      prefix for transaction time log file
                           (default: "pgbench_log")
  --max-tries=NUM          max number of tries to run transaction (default: 1)
  --progress-timestamp     use Unix epoch timestamps for progress
  --random-seed=SEED       set random seed ("time", "rand", integer)
  --sampling-rate=NUM      fraction of transactions to log (e.g., 0.01 for 1%)
  --show-script=NAME       show builtin script code, then exit
  --verbose-errors         print messages of all errors

Common options:
  -d, --debug              print debugging output
  -h, --host=HOSTNAME      database server host or socket directory
  -p, --port=PORT          database server port number
  -U, --username=USERNAME  connect as specified database user
  -V, --version            output version information, then exit
  -?, --help               show this help, then exit

"#;

/// pgbench-rs's own options, in a section of their own.
const OUR_OPTIONS: &str = r#"pgbench-rs options (beyond pgbench 15):
  --client-stages=DURATION:CLIENTS[,...]
                           the number of active clients moves linearly to each
                           stage's target over its DURATION (30s, 5m, 1h), from
                           -c (default: 1); their sum is -T; a block per stage
                           after the report
  --continue-on-error      continue running after an SQL error (as pgbench 19)
  --exit-on-abort          exit when any client is aborted (as pgbench 17)
  --export-html=FILE       write the run's charts as a self-contained HTML page
  --export-json=FILE       write the run's results as JSON (see pgbench-report)
  --fail-if-below=RATE     with --find-max-rate: exit 3 when the rate found is
                           below RATE transactions per second
  --find-max-rate=TARGET   find the highest -R whose measured part meets TARGET,
                           e.g. p99<=20ms,failed<=0.1% (a run without -R, then
                           -R steps of --warmup and -T each)
  --history[=STORE]        record the run in a run history (pgbench-report
                           history): a SQLite file or a postgresql:// store;
                           default: $PGBENCH_RS_HISTORY, else
                           $XDG_DATA_HOME/pgbench-rs/history.sqlite
                           (PGBENCH_RS_HISTORY set alone records every run)
  --latency-percentiles[=LIST]
                           after the report, print latency percentiles
                           (default list: 50,90,99,99.9,99.99; max is always shown)
  --metrics-linger=SECONDS after the report (or -i's load), keep serving the
                           final metrics (default: 30; Ctrl-C ends it)
  --metrics-listen=[HOST:]PORT
                           serve Prometheus metrics at http://HOST:PORT/metrics
                           during the run, or the load's progress under -i
                           (default host: 127.0.0.1)
  --os-threads=NUM         run the -j threads on NUM OS threads (default: one
                           per CPU, at most -j; one per thread under -C,
                           --reconnect or \shell)
  --print-server-stats     --server-stats, and its server: block after the report
  --print-warnings         after the report, print the run's validity warnings
  --rate-stages=DURATION:RATE[,...]
                           the -R schedule's rate moves linearly to each stage's
                           target over its DURATION, from -R (default: 0); their
                           sum is -T; a block per stage after the report
  --reconnect              ride through a lost connection or a server shutting
                           down: count the transaction as failed, connect again,
                           go on; an availability block after the report
  --reconnect-timeout=SECONDS
                           with --reconnect: abort a client that cannot connect
                           again within SECONDS (default: 60)
  --repeat=N               with --sweep: run each value N times (default: 1)
  --resume                 with -i: load in units recorded in the database, and
                           continue an unfinished load of the same options
  --scenarios=FILE         run the scenarios of a TOML file together: each its
                           scripts, clients, threads, rate and conninfo (in
                           place of -c, -j, -R, -b, -f); a block per scenario
                           after the report
  --search-steps=N         with --find-max-rate: at most N steps (default: 12)
  --search-tolerance=PCT   with --find-max-rate: narrow the rate to within PCT
                           percent (default: 5)
  --server-stats           record the server's statistics over the measured
                           window (pg_stat_database, pg_stat_wal, checkpoints,
                           wait events) in the results file
  --shard=K/N              with -i: load the K-th of N shares of the rows (N
                           processes load one database; the last builds keys)
  --sweep=NAME=V1,V2,...   run once at each value of NAME: clients (-c), rate
                           (-R) or a script variable (-D NAME); a line a step,
                           then the report of the peak
  --tag=KEY=VALUE          with --history: label the recorded run (repeatable)
  --temp-instance          run on a throwaway local PostgreSQL cluster,
                           initialized at scale -s, removed afterwards; fast
                           but not durable (fsync, synchronous_commit and
                           full_page_writes off)
  --temp-instance-durable  the same with the server's durable defaults
  --warmup=SECONDS         run SECONDS before measuring (the report, logs,
                           -P and results files cover the measured part only)
  --worker=I/N             be worker I (0..N-1) of N processes running one run
                           together: clients I*C..I*C+C-1 of N*C, one start instant
  --worker-timeout=SECONDS how long --worker waits for the others (default: 60)
  --workload=NAME          run (or with -i, prepare) a generated workload:
                           {workloads},
                           options as -D NAME=VALUE, prepared statements
                           unless -M; --show-script=NAME prints its script
  --check                  check the pgbench tables (rows against the scale,
                           keys), or with --workload its tables (keys, indexes,
                           rows; TPC-C's functions and conditions 1-4), run
                           nothing
  -j, --jobs=NUM           with -i: load and index with NUM connections in parallel

"#;

/// pgbench's last lines.
const BUG_REPORTS: &str = r#"Report bugs to <pgsql-bugs@lists.postgresql.org>.
PostgreSQL home page: <https://www.postgresql.org/>
"#;
