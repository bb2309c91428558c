//! The integration tests of pgbench-rs: one test binary (`cargo test --test
//! integration`), black-box runs of the `pgbench-rs` executable, mostly beside stock
//! pgbench. Each module says in a line what belongs in it; `docs/testing.md` has the
//! map of every layer's tests and where to add one.

mod support; // shared helpers: databases on the test cluster, both programs, Perl patterns

mod availability; // --reconnect on real outages: an immediate restart, a failover to a promoted standby, pgbouncer restarted, -R
mod bench; // benchmark runs against a real server: the headline workload, a dying server
mod cli; // port of 002_pgbench_no_server.pl: options and scripts that fail before connecting
mod continue_on_error; // pgbench 19's --continue-on-error: report, per-script, -r and log lines from its rules
mod deploy; // deploy/: manifests against the Kubernetes schema, hadolint, collect.sh on canned logs
mod distributed; // three real --worker=I/3 processes merged: rows, -l percentiles, a killed worker
mod examples; // every examples/ script and every docs/script-language.md case runs as written
mod export; // --export-json / --export-html on real runs: schema, show byte for byte, series, Ctrl-C's file, FIFOs
mod golden; // the same job with stock pgbench and pgbench-rs: outputs equal line for line
mod hammerdb; // --workload=tpcc beside real HammerDB 4.12: schema, load values, statements per call
mod history; // pgbench-report history: import, list, show, compare, diff, regressions, trend (in a real browser), export, rm; errors
mod init; // -i against stock: schema, contents, statistics, messages; errors mid-load
mod interrupt; // Ctrl-C and SIGTERM, stuck backends, interrupted loads: runs end on time, results kept
mod merge; // pgbench-report merge on real --export-json files rewritten as workers' files
mod metrics; // --metrics-listen: a real Prometheus scrapes runs (one process, two workers), the linger, errors
mod multiplex; // -j threads of several clients: seeded rows equal stock's, one OS thread per -j thread
mod redaction; // passwords in the connection string (or another session's, via --server-stats): in no file or output
mod report; // pgbench-report as a program: show, import, compare, html (in a real browser)
mod resume; // #47: loads killed, restarted under, sharded and resumed: pgbench, TPC-C, sysbench
mod run_end; // how a run ends: a frozen server, a partition (with or without watchers), signals twice, long transactions
mod scenarios; // --scenarios: reads on a streaming standby and writes on the primary in one run, each counted by its server; refusals
mod server_stats; // --server-stats and the validity warnings: server commits beside the client's, a CHECKPOINT in the window, pgbench-report check
mod stages; // --rate-stages, --client-stages: each stage's tps in the results file
mod sysbench; // --workload=oltp_* beside real sysbench: prepare schema and values, statements per transaction, rows
mod tap; // port of 001_pgbench_with_server.pl, one module per topic of the upstream file
mod tpcc; // --workload=tpcc: the load's rows, a warmed-up run's NOPM, --check, a seeded rerun, the monitor's faults
mod worker; // --worker=I/N: several processes, one run: seeds, one start, the barrier's faults
