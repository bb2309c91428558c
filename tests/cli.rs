//! pgbench's own `t/002_pgbench_no_server.pl`, case by case: command lines and scripts
//! that must fail (or print help, version and builtins) before any connection, with
//! the exit status and the output patterns of the upstream test.
//!
//! The cases are those of the file as of pgbench 16; stock pgbench 15.20 meets every
//! one of them. Setting `PGBENCH_TAP_STOCK=1` runs the same expectations against stock
//! pgbench, which is how they were checked.

use crate::support;
use crate::support::pattern::{assert_like, assert_unlike};
use std::process::{Command, Stdio};

/// The program under test: pgbench-rs, or stock pgbench with `PGBENCH_TAP_STOCK`.
fn program() -> Command {
    let mut cmd = if support::tap_stock() {
        Command::new(support::stock_pgbench())
    } else {
        Command::new(env!("CARGO_BIN_EXE_pgbench-rs"))
    };
    for (k, _) in std::env::vars() {
        if k.starts_with("PG") {
            cmd.env_remove(k);
        }
    }
    // Nothing here may connect; if something tries, it finds no server.
    cmd.env("PGHOST", "/nonexistent").stdin(Stdio::null());
    cmd
}

/// Runs the program with `args` and checks the exit status and every pattern, as the
/// upstream `command_checks_all` does.
fn check(args: &[String], status: i32, stdout: &[&str], stderr: &[&str], name: &str) {
    let run = support::run(program().args(args));
    assert_eq!(
        run.code, status,
        "{name}: exit status for {args:?}\n--- stdout:\n{}--- stderr:\n{}",
        run.stdout, run.stderr
    );
    assert_like(&run.stdout, stdout, &format!("{name}: stdout"));
    assert_like(&run.stderr, stderr, &format!("{name}: stderr"));
}

fn words(opts: &str) -> Vec<String> {
    opts.split_whitespace().map(str::to_string).collect()
}

/// An option error: status 1, nothing on stdout.
fn option_error(opts: &str, stderr: &[&str]) {
    check(&words(opts), 1, &["^$"], stderr, opts);
}

/// A script that fails to load: written to a file, given with `-f`, status 1.
fn script_error(file: &str, contents: &str, stderr: &[&str]) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = support::script_file(&dir, file, contents);
    check(&["-f".to_string(), path], 1, &["^$"], stderr, file);
}

// Option errors.

#[test]
fn bad_option() {
    option_error(
        "-h home -p 5432 -U calvin -d --bad-option",
        &["--help.*more information"],
    );
}

#[test]
fn no_file() {
    option_error(
        "-f no-such-file",
        &[r#"could not open file "no-such-file":"#],
    );
}

#[test]
fn no_builtin() {
    option_error(
        "-b no-such-builtin",
        &[r#"no builtin script .* "no-such-builtin""#],
    );
}

#[test]
fn invalid_weight() {
    option_error(
        "--builtin=select-only@one",
        &[r"invalid weight specification: \@one"],
    );
}

#[test]
fn invalid_weight_out_of_range() {
    option_error("-b select-only@-1", &["weight spec.* out of range .*: -1"]);
}

#[test]
fn too_many_scripts() {
    option_error(&"-S ".repeat(129), &["at most 128 SQL scripts"]);
}

#[test]
fn bad_clients() {
    option_error(
        "-c three",
        &[r#"invalid value "three" for option -c/--client"#],
    );
}

#[test]
fn bad_threads() {
    option_error(
        "-j eleven",
        &[r#"invalid value "eleven" for option -j/--jobs"#],
    );
}

#[test]
fn bad_scale() {
    option_error(
        "-i -s two",
        &[r#"invalid value "two" for option -s/--scale"#],
    );
}

#[test]
fn invalid_transactions() {
    option_error(
        "-t zil",
        &[r#"invalid value "zil" for option -t/--transactions"#],
    );
}

#[test]
fn invalid_duration() {
    option_error("-T ten", &[r#"invalid value "ten" for option -T/--time"#]);
}

#[test]
fn transactions_xor_time() {
    option_error(
        "-N -l --aggregate-interval=5 --log-prefix=notused -t 1000 -T 1",
        &["specify either "],
    );
}

#[test]
fn time_xor_transactions() {
    option_error(
        "-P 1 --progress-timestamp -l --sampling-rate=0.001 -T 10 -t 1000",
        &["specify either "],
    );
}

#[test]
fn bad_variable() {
    option_error("--define foobla", &["invalid variable definition"]);
}

#[test]
fn invalid_fillfactor() {
    option_error("-F 1", &["-F/--fillfactor must be in range"]);
}

#[test]
fn invalid_query_mode() {
    option_error("-M no-such-mode", &["invalid query mode"]);
}

#[test]
fn invalid_progress() {
    option_error("--progress=0", &["-P/--progress must be in range"]);
}

#[test]
fn invalid_rate() {
    option_error("--rate=0.0", &["invalid rate limit"]);
}

#[test]
fn invalid_latency() {
    option_error("--latency-limit=0.0", &["invalid latency limit"]);
}

#[test]
fn invalid_sampling_rate() {
    option_error("--sampling-rate=0", &["invalid sampling rate"]);
}

#[test]
fn invalid_aggregate_interval() {
    option_error(
        "--aggregate-interval=-3",
        &["--aggregate-interval must be in range"],
    );
}

#[test]
fn weight_zero() {
    option_error("-b se@0 -b si@0 -b tpcb@0", &["weight must not be zero"]);
}

#[test]
fn init_vs_run() {
    option_error("-i -S", &["cannot be used in initialization"]);
}

#[test]
fn run_vs_init() {
    option_error("-S -F 90", &["cannot be used in benchmarking"]);
}

#[test]
fn ambiguous_builtin() {
    option_error("-b s", &["ambiguous"]);
}

#[test]
fn progress_timestamp_needs_progress() {
    option_error("--progress-timestamp", &["allowed only under"]);
}

#[test]
fn init_steps_without_init_option() {
    option_error("-I dtg", &["cannot be used in benchmarking mode"]);
}

#[test]
fn invalid_init_step() {
    option_error(
        "-i -I dta",
        &[
            "unrecognized initialization step",
            "Allowed step characters are",
        ],
    );
}

#[test]
fn bad_random_seed() {
    option_error(
        "--random-seed=one",
        &[
            r#"unrecognized random seed option "one""#,
            r#"Expecting an unsigned integer, "time" or "rand""#,
            "error while setting random seed from --random-seed option",
        ],
    );
}

#[test]
fn bad_partition_method() {
    option_error(
        "-i --partition-method=BAD",
        &[r#""range""#, r#""hash""#, r#""BAD""#],
    );
}

#[test]
fn bad_partition_number() {
    option_error("-i --partitions -1", &["--partitions must be in range"]);
}

#[test]
fn partition_method_without_partitioning() {
    option_error(
        "-i --partition-method=hash",
        &["partition-method requires greater than zero --partitions"],
    );
}

#[test]
fn bad_maximum_number_of_tries() {
    option_error(
        "--max-tries -10",
        &[r#"invalid number of maximum tries: "-10""#],
    );
}

#[test]
fn an_infinite_number_of_tries() {
    option_error(
        "--max-tries 0",
        &["an unlimited number of transaction tries can only be used with --latency-limit or a duration"],
    );
}

// Logging sub-options.

#[test]
fn sampling_needs_log() {
    option_error("--sampling-rate=0.01", &["log sampling .* only when"]);
}

#[test]
fn sampling_xor_aggregate() {
    option_error(
        "-l --sampling-rate=0.1 --aggregate-interval=3",
        &["sampling .* aggregation .* cannot be used at the same time"],
    );
}

#[test]
fn aggregate_needs_log() {
    option_error("--aggregate-interval=3", &["aggregation .* only when"]);
}

#[test]
fn log_prefix_needs_log() {
    option_error("--log-prefix=x", &["prefix .* only when"]);
}

#[test]
fn duration_and_aggregation() {
    option_error("-l -T 1 --aggregate-interval=3", &["aggr.* not be higher"]);
}

#[test]
fn duration_multiple_of_aggregation() {
    option_error("-l -T 5 --aggregate-interval=3", &["multiple"]);
}

// Help, version and builtins.

#[test]
fn help() {
    check(
        &words("--help"),
        0,
        &[
            "benchmarking tool for PostgreSQL",
            "Usage",
            "Initialization options:",
            "Common options:",
            "Report bugs to",
        ],
        &["^$"],
        "pgbench help",
    );
}

#[test]
fn version() {
    check(
        &words("-V"),
        0,
        &["^pgbench .PostgreSQL. "],
        &["^$"],
        "pgbench version",
    );
}

#[test]
fn builtin_list() {
    check(
        &words("-b list"),
        0,
        &["^$"],
        &[
            "Available builtin scripts:",
            "tpcb-like",
            "simple-update",
            "select-only",
        ],
        "pgbench builtin list",
    );
}

#[test]
fn builtin_listing() {
    let args = words("--show-script se");
    check(
        &args,
        0,
        &["^$"],
        &[
            "select-only: ",
            "SELECT abalance FROM pgbench_accounts WHERE",
        ],
        "pgbench builtin listing",
    );
    // Upstream writes these as look-aheads that match anything; what they mean is
    // that the select-only script neither updates nor inserts.
    let run = support::run(program().args(&args));
    assert_unlike(&run.stderr, &["UPDATE", "INSERT"], "select-only script");
}

// Scripts that fail to load.

#[test]
fn missing_endif() {
    script_error(
        "if-noendif.sql",
        r"\if 1",
        &[r"\\if without matching \\endif"],
    );
}

#[test]
fn missing_if_on_elif() {
    script_error(
        "elif-noif.sql",
        r"\elif 1",
        &[r"\\elif without matching \\if"],
    );
}

#[test]
fn missing_if_on_else() {
    script_error(
        "else-noif.sql",
        r"\else",
        &[r"\\else without matching \\if"],
    );
}

#[test]
fn missing_if_on_endif() {
    script_error(
        "endif-noif.sql",
        r"\endif",
        &[r"\\endif without matching \\if"],
    );
}

#[test]
fn elif_after_else() {
    script_error(
        "else-elif.sql",
        "\\if 1\n\\else\n\\elif 0\n\\endif",
        &[r"\\elif after \\else"],
    );
}

#[test]
fn else_after_else() {
    script_error(
        "else-else.sql",
        "\\if 1\n\\else\n\\else\n\\endif",
        &[r"\\else after \\else"],
    );
}

#[test]
fn if_syntax_error() {
    script_error(
        "if-bad.sql",
        "\\if\n\\endif\n",
        &[r#"syntax error in command "if""#],
    );
}

#[test]
fn elif_syntax_error() {
    script_error(
        "elif-bad.sql",
        "\\if 0\n\\elif +\n\\endif\n",
        &[r#"syntax error in command "elif""#],
    );
}

#[test]
fn else_syntax_error() {
    script_error(
        "else-bad.sql",
        "\\if 0\n\\else BAD\n\\endif\n",
        &[r#"unexpected argument in command "else""#],
    );
}

#[test]
fn endif_syntax_error() {
    script_error(
        "endif-bad.sql",
        "\\if 0\n\\endif BAD\n",
        &[r#"unexpected argument in command "endif""#],
    );
}

#[test]
fn not_enough_arguments_for_least() {
    script_error(
        "bad-least.sql",
        "\\set i least()\n",
        &[r"at least one argument expected \(least\)"],
    );
}

#[test]
fn not_enough_arguments_for_greatest() {
    script_error(
        "bad-greatest.sql",
        "\\set i greatest()\n",
        &[r"at least one argument expected \(greatest\)"],
    );
}

#[test]
fn not_enough_arguments_for_hash() {
    script_error(
        "bad-hash-1.sql",
        "\\set i hash()\n",
        &[r"unexpected number of arguments \(hash\)"],
    );
}

#[test]
fn too_many_arguments_for_hash() {
    script_error(
        "bad-hash-2.sql",
        "\\set i hash(1,2,3)\n",
        &[r"unexpected number of arguments \(hash\)"],
    );
}

#[test]
fn bigint_overflow_1() {
    script_error(
        "overflow-1.sql",
        "\\set i 100000000000000000000\n",
        &["bigint constant overflow"],
    );
}

#[test]
fn double_overflow_2() {
    script_error(
        "overflow-2.sql",
        "\\set d 1.0E309\n",
        &["double constant overflow"],
    );
}

#[test]
fn double_overflow_3() {
    script_error(
        "overflow-3.sql",
        "\\set d .1E310\n",
        &["double constant overflow"],
    );
}

#[test]
fn set_i() {
    script_error(
        "set_i_op",
        "\\set i 1 +\n",
        &["set i 1 ", r"\^ error found here"],
    );
}

#[test]
fn not_enough_arguments_to_permute() {
    script_error(
        "bad-permute-1.sql",
        "\\set i permute(1)\n",
        &[r"unexpected number of arguments \(permute\)"],
    );
}

#[test]
fn too_many_arguments_to_permute() {
    script_error(
        "bad-permute-2.sql",
        "\\set i permute(1, 2, 3, 4)\n",
        &[r"unexpected number of arguments \(permute\)"],
    );
}
