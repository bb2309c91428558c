//! Turning the tokenised command line into what to do, with pgbench 15's validation:
//! the same checks in the same order, the same messages, exit status 1.
//!
//! Mirrors the option loop of pgbench.c's `main()` and the checks after it. Options are
//! acted on in command-line order, so a script's syntax error is reported before a bad
//! option that follows it, as pgbench does.

use super::args::{Occurrence, Opt, Tokens};
use crate::init::{InitOptions, PartitionMethod};
use crate::logging::Level;
use pgbench_script::ast::{CommandKind, Script};
use pgbench_script::{builtin, parser, prng, variables};

/// pgbench's `MAX_SCRIPTS`.
const MAX_SCRIPTS: usize = 128;
/// pgbench's `MAX_ARGS - 1`: parameters of one SQL command in extended/prepared mode.
const MAX_QUERY_PARAMS: usize = 255;
/// `-t` default when neither `-t` nor `-T` is given.
const DEFAULT_NXACTS: i32 = 10;

pub use pgbench_results::QueryMode;

/// A script to run and its weight.
#[derive(Debug, Clone)]
pub struct WeightedScript {
    pub script: Script,
    pub weight: i64,
}

/// Where to connect: pgbench's `-h`, `-p`, `-U` and database name (which may be a
/// conninfo string or a URI).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ConnArgs {
    pub host: Option<String>,
    pub port: Option<String>,
    pub user: Option<String>,
    pub dbname: String,
}

impl ConnArgs {
    /// What pgbench passes to `PQconnectdbParams`: `-h -p -U`, DBNAME (expanded when
    /// it is a conninfo string or URI) and `pgbench` as the fallback application name.
    pub fn connect_args(&self) -> pgbench_wire::ConnectArgs {
        pgbench_wire::ConnectArgs {
            host: self.host.clone(),
            port: self.port.clone(),
            user: self.user.clone(),
            password: None,
            dbname: Some(self.dbname.clone()),
            fallback_application_name: Some("pgbench".to_string()),
        }
    }
}

/// Everything benchmarking mode needs.
#[derive(Debug, Clone)]
pub struct BenchOptions {
    pub scripts: Vec<WeightedScript>,
    /// A builtin script is among them (scale then comes from `pgbench_branches`).
    pub internal_script_used: bool,
    pub nclients: usize,
    /// After capping to `nclients`.
    pub nthreads: usize,
    /// `-t` per client; 0 under `-T`.
    pub nxacts: i64,
    /// `-T` seconds; 0 under `-t`.
    pub duration: i64,
    pub is_connect: bool,
    pub query_mode: QueryMode,
    /// `-P` seconds, 0 = off.
    pub progress: i64,
    pub progress_timestamp: bool,
    pub report_per_command: bool,
    /// `-R` as a per-thread mean delay in µs (pgbench's `throttle_delay`), 0 = off.
    pub throttle_delay: f64,
    /// `-L` in µs, 0 = off.
    pub latency_limit: i64,
    pub use_log: bool,
    pub log_prefix: Option<String>,
    /// `--sampling-rate`, 0 = log everything.
    pub sample_rate: f64,
    /// `--aggregate-interval` seconds, 0 = off.
    pub agg_interval: i64,
    /// 0 = unlimited.
    pub max_tries: u32,
    pub failures_detailed: bool,
    pub verbose_errors: bool,
    pub exit_on_abort: bool,
    /// `-D` definitions in order (name, value).
    pub defines: Vec<(String, String)>,
    pub scale: i32,
    pub scale_given: bool,
    pub no_vacuum: bool,
    pub vacuum_all: bool,
    /// Percentiles to print after the report (`--latency-percentiles`), if asked.
    pub latency_percentiles: Option<Vec<f64>>,
}

/// What the command line asks for.
#[derive(Debug, Clone)]
pub enum Action {
    Help,
    Version,
    /// `-b list` or `--show-script`: text for stderr, exit 0.
    PrintAndExit(String),
    Init {
        conn: ConnArgs,
        init: InitOptions,
        common: Common,
    },
    Bench {
        conn: ConnArgs,
        bench: Box<BenchOptions>,
        common: Common,
    },
}

/// Options that apply to both modes.
#[derive(Debug, Clone, Default)]
pub struct Common {
    /// `-d`: debug messages.
    pub debug: bool,
    /// The base random seed, and whether it was given (then pgbench announces it).
    pub random_seed: u64,
    pub seed_given: bool,
    /// `--temp-instance`: run on a throwaway cluster.
    pub temp_instance: bool,
}

/// A failure to start: the lines pgbench prints, then exit status 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub lines: Vec<Line>,
}

/// One line of a failure message.
#[derive(Debug, Clone, PartialEq)]
pub enum Line {
    /// A `<progname>: <level>: ...` line.
    Log(Level, String),
    /// Text printed as it is (getopt's complaint, a script error's caret block).
    Raw(String),
}

impl Failure {
    fn fatal(msg: impl Into<String>) -> Failure {
        Failure {
            lines: vec![Line::Log(Level::Error, msg.into())],
        }
    }

    fn with(mut self, level: Level, msg: impl Into<String>) -> Failure {
        self.lines.push(Line::Log(level, msg.into()));
        self
    }

    /// The whole stderr text, with `progname` in every log line.
    pub fn render(&self) -> String {
        self.lines
            .iter()
            .map(|l| match l {
                Line::Log(level, msg) => crate::logging::format_line(*level, msg),
                Line::Raw(text) => text.clone(),
            })
            .collect()
    }
}

/// The environment pgbench consults while parsing (tests pass their own).
pub trait Env {
    fn var(&self, name: &str) -> Option<String>;
    fn read_file(&self, path: &str) -> std::io::Result<String>;
    fn os_user(&self) -> Option<String>;
}

/// The real process environment.
pub struct ProcessEnv;

impl Env for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }

    fn read_file(&self, path: &str) -> std::io::Result<String> {
        if path == "-" {
            let mut s = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut s)?;
            Ok(s)
        } else {
            let bytes = std::fs::read(path)?;
            // pgbench reads bytes; scripts in other encodings still parse as SQL_ASCII.
            Ok(String::from_utf8_lossy(&bytes).into_owned())
        }
    }

    fn os_user(&self) -> Option<String> {
        crate::sys::os_user_name()
    }
}

/// C's `strtol`-based `option_parse_int` (fe_utils/option_utils.c): trailing white
/// space is allowed, anything else after the number is not; out-of-int range is a
/// range error.
fn parse_int(value: &str, name: &str, min: i64, max: i64) -> Result<i64, Failure> {
    let (num, rest) =
        crate::c_numbers::strtol_prefix(value.trim_start_matches(crate::c_numbers::is_c_space));
    // With no digits strtol leaves endptr at the start and returns 0.
    let rest = if num.is_some() { rest } else { value };
    if !rest
        .trim_start_matches(crate::c_numbers::is_c_space)
        .is_empty()
    {
        return Err(Failure::fatal(format!(
            "invalid value \"{value}\" for option {name}"
        )));
    }
    let v = num.unwrap_or(0);
    let in_int = v >= i64::from(i32::MIN) && v <= i64::from(i32::MAX);
    if !in_int || v < min || v > max {
        return Err(Failure::fatal(format!(
            "{name} must be in range {min}..{max}"
        )));
    }
    Ok(v)
}

/// `parseScriptWeight`: `NAME@W` splits at the last `@`.
fn parse_script_weight(option: &str) -> Result<(&str, i64), Failure> {
    let Some(at) = option.rfind('@') else {
        return Ok((option, 1));
    };
    let (name, spec) = (&option[..at], &option[at..]);
    let digits = &spec[1..];
    let trimmed = digits.trim_start_matches(crate::c_numbers::is_c_space);
    let (num, rest) = crate::c_numbers::strtol_prefix(trimmed);
    let Some(w) = num.filter(|_| rest.is_empty()) else {
        return Err(Failure::fatal(format!(
            "invalid weight specification: {spec}"
        )));
    };
    if !(0..=i64::from(i32::MAX)).contains(&w) {
        return Err(Failure::fatal(format!(
            "weight specification out of range (0 .. {}): {w}",
            i32::MAX
        )));
    }
    Ok((name, w))
}

fn script_failure(err: &pgbench_script::error::ScriptError) -> Failure {
    Failure {
        lines: vec![Line::Raw(err.render(crate::logging::progname()))],
    }
}

fn find_builtin(name: &str) -> Result<&'static builtin::Builtin, Failure> {
    builtin::find(name).map_err(|e| script_failure(&e))
}

/// The `-c` check on open files (pgbench 18 raises the soft limit when it can).
fn check_open_files(nclients: i64) -> Result<(), Failure> {
    let need = nclients.saturating_add(3);
    match crate::sys::ensure_open_files(need as u64) {
        Ok(()) => Ok(()),
        Err(crate::sys::LimitError::Hard(limit)) => Err(Failure::fatal(format!(
            "need at least {need} open files, but system limit is {limit}"
        ))
        .with(
            Level::Hint,
            "Reduce number of clients, or use limit/ulimit to increase the system limit.",
        )),
        Err(crate::sys::LimitError::Raise(e)) => Err(Failure::fatal(format!(
            "need at least {need} open files, but couldn't raise the limit: {e}"
        ))
        .with(
            Level::Hint,
            "Reduce number of clients, or use limit/ulimit to increase the system limit.",
        )),
    }
}

fn parse_percentiles(list: &str) -> Result<Vec<f64>, Failure> {
    if list.is_empty() {
        return Ok(vec![50.0, 90.0, 99.0, 99.9, 99.99]);
    }
    let mut out = Vec::new();
    for item in list.split(',') {
        let p: f64 = item.trim().parse().map_err(|_| {
            Failure::fatal(format!(
                "invalid latency percentile \"{item}\": expecting numbers in (0, 100], as in 50,99,99.9"
            ))
        })?;
        if !(p > 0.0 && p <= 100.0) {
            return Err(Failure::fatal(format!(
                "invalid latency percentile \"{item}\": expecting numbers in (0, 100], as in 50,99,99.9"
            )));
        }
        out.push(p);
    }
    Ok(out)
}

/// Reads the whole command line (without `argv[0]`) as pgbench 15 does.
pub fn interpret(argv0: &str, args: &[String], env: &dyn Env) -> Result<Action, Failure> {
    // --help and --version count only as the first argument.
    match args.first().map(String::as_str) {
        Some("--help" | "-?") => return Ok(Action::Help),
        Some("--version" | "-V") => return Ok(Action::Version),
        _ => {}
    }

    let mut common = Common::default();
    // The seed is set from the environment first, then by each --random-seed.
    match env.var("PGBENCH_RANDOM_SEED") {
        None => common.random_seed = prng::monotonic_micros(),
        Some(s) => set_random_seed(&mut common, &s, "PGBENCH_RANDOM_SEED environment variable")?,
    }

    let Tokens {
        options,
        positionals,
    } = super::args::tokenize(argv0, args).map_err(|e| Failure {
        lines: vec![
            Line::Raw(format!("{}\n", e.0)),
            Line::Log(
                Level::Hint,
                format!(
                    "Try \"{} --help\" for more information.",
                    crate::logging::progname()
                ),
            ),
        ],
    })?;

    let mut is_init_mode = false;
    let mut init_steps: Option<String> = None;
    let mut foreign_keys = false;
    let mut benchmarking_option_set = false;
    let mut initialization_option_set = false;
    let mut conn = ConnArgs::default();
    let mut init = InitOptions::default();
    let mut partition_method_given = false;
    let mut init_jobs: Option<u32> = None;
    let mut b = BenchOptions {
        scripts: Vec::new(),
        internal_script_used: false,
        nclients: 1,
        nthreads: 1,
        nxacts: 0,
        duration: 0,
        is_connect: false,
        query_mode: QueryMode::Simple,
        progress: 0,
        progress_timestamp: false,
        report_per_command: false,
        throttle_delay: 0.0,
        latency_limit: 0,
        use_log: false,
        log_prefix: None,
        sample_rate: 0.0,
        agg_interval: 0,
        max_tries: 1,
        failures_detailed: false,
        verbose_errors: false,
        exit_on_abort: false,
        defines: Vec::new(),
        scale: 1,
        scale_given: false,
        no_vacuum: false,
        vacuum_all: false,
        latency_percentiles: None,
    };

    let add_script = |b: &mut BenchOptions, script: Script, weight: i64| -> Result<(), Failure> {
        if script.commands.is_empty() {
            return Err(Failure::fatal(format!(
                "empty command list for script \"{}\"",
                script.name
            )));
        }
        if b.scripts.len() >= MAX_SCRIPTS {
            return Err(Failure::fatal(format!(
                "at most {MAX_SCRIPTS} SQL scripts are allowed"
            )));
        }
        b.scripts.push(WeightedScript { script, weight });
        Ok(())
    };

    for Occurrence { opt, value } in options {
        let v = value.as_deref().unwrap_or("");
        match opt {
            Opt::Builtin => {
                if v == "list" {
                    return Ok(Action::PrintAndExit(builtin::list_text()));
                }
                let (name, weight) = parse_script_weight(v)?;
                let found = find_builtin(name)?;
                add_script(&mut b, found.script(), weight)?;
                benchmarking_option_set = true;
                b.internal_script_used = true;
            }
            Opt::Client => {
                benchmarking_option_set = true;
                let n = parse_int(v, "-c/--clients", 1, i64::from(i32::MAX))?;
                check_open_files(n)?;
                b.nclients = n as usize;
            }
            Opt::Connect => {
                benchmarking_option_set = true;
                b.is_connect = true;
            }
            Opt::Debug => common.debug = true,
            Opt::Define => {
                benchmarking_option_set = true;
                let Some((name, val)) = v
                    .split_once('=')
                    .filter(|(n, v)| !n.is_empty() && !v.is_empty())
                else {
                    return Err(Failure::fatal(format!(
                        "invalid variable definition: \"{v}\""
                    )));
                };
                if !variables::is_valid_name(name) && !b.defines.iter().any(|(n, _)| n == name) {
                    return Err(Failure::fatal(format!(
                        "option: invalid variable name: \"{name}\""
                    )));
                }
                b.defines.push((name.to_string(), val.to_string()));
            }
            Opt::File => {
                let (path, weight) = parse_script_weight(v)?;
                let text = env.read_file(path).map_err(|e| {
                    Failure::fatal(format!(
                        "could not open file \"{path}\": {}",
                        crate::sys::strerror(&e)
                    ))
                })?;
                let script =
                    parser::parse_script(path, path, &text).map_err(|e| script_failure(&e))?;
                add_script(&mut b, script, weight)?;
                benchmarking_option_set = true;
            }
            Opt::Fillfactor => {
                initialization_option_set = true;
                init.fillfactor = parse_int(v, "-F/--fillfactor", 10, 100)? as i32;
            }
            Opt::Host => conn.host = Some(v.to_string()),
            Opt::Initialize => is_init_mode = true,
            Opt::InitSteps => {
                check_init_steps(v)?;
                init_steps = Some(v.to_string());
                initialization_option_set = true;
            }
            Opt::Jobs => {
                // pgbench-rs: with -i, -j sets the number of loading connections.
                // Not a benchmarking-only option here: pgbench-rs allows `-i -j N`.
                let n = parse_int(v, "-j/--jobs", 1, i64::from(i32::MAX))?;
                b.nthreads = n as usize;
                init_jobs = Some(n as u32);
            }
            Opt::Log => {
                benchmarking_option_set = true;
                b.use_log = true;
            }
            Opt::LatencyLimit => {
                let ms = crate::c_numbers::atof(v);
                if ms.is_nan() || ms <= 0.0 {
                    return Err(Failure::fatal(format!("invalid latency limit: \"{v}\"")));
                }
                benchmarking_option_set = true;
                b.latency_limit = (ms * 1000.0) as i64;
            }
            Opt::Protocol => {
                benchmarking_option_set = true;
                b.query_mode = match v {
                    "simple" => QueryMode::Simple,
                    "extended" => QueryMode::Extended,
                    "prepared" => QueryMode::Prepared,
                    _ => return Err(Failure::fatal(format!("invalid query mode (-M): \"{v}\""))),
                };
            }
            Opt::NoVacuum => b.no_vacuum = true,
            Opt::SkipSomeUpdates => {
                add_script(&mut b, find_builtin("simple-update")?.script(), 1)?;
                benchmarking_option_set = true;
                b.internal_script_used = true;
            }
            Opt::Port => conn.port = Some(v.to_string()),
            Opt::Progress => {
                benchmarking_option_set = true;
                b.progress = parse_int(v, "-P/--progress", 1, i64::from(i32::MAX))?;
            }
            Opt::Quiet => {
                initialization_option_set = true;
                init.quiet = true;
            }
            Opt::ReportPerCommand => {
                benchmarking_option_set = true;
                b.report_per_command = true;
            }
            Opt::Rate => {
                let rate = crate::c_numbers::atof(v);
                benchmarking_option_set = true;
                if rate.is_nan() || rate <= 0.0 {
                    return Err(Failure::fatal(format!("invalid rate limit: \"{v}\"")));
                }
                b.throttle_delay = 1_000_000.0 / rate;
            }
            Opt::Scale => {
                b.scale_given = true;
                b.scale = parse_int(v, "-s/--scale", 1, i64::from(i32::MAX))? as i32;
                init.scale = b.scale;
            }
            Opt::SelectOnly => {
                add_script(&mut b, find_builtin("select-only")?.script(), 1)?;
                benchmarking_option_set = true;
                b.internal_script_used = true;
            }
            Opt::Transactions => {
                benchmarking_option_set = true;
                b.nxacts = parse_int(v, "-t/--transactions", 1, i64::from(i32::MAX))?;
            }
            Opt::Time => {
                benchmarking_option_set = true;
                b.duration = parse_int(v, "-T/--time", 1, i64::from(i32::MAX))?;
            }
            Opt::Username => conn.user = Some(v.to_string()),
            Opt::VacuumAll => {
                benchmarking_option_set = true;
                b.vacuum_all = true;
            }
            Opt::UnloggedTables => {
                initialization_option_set = true;
                init.unlogged_tables = true;
            }
            Opt::Tablespace => {
                initialization_option_set = true;
                init.tablespace = Some(v.to_string());
            }
            Opt::IndexTablespace => {
                initialization_option_set = true;
                init.index_tablespace = Some(v.to_string());
            }
            Opt::SamplingRate => {
                benchmarking_option_set = true;
                b.sample_rate = crate::c_numbers::atof(v);
                if b.sample_rate.is_nan() || b.sample_rate <= 0.0 || b.sample_rate > 1.0 {
                    return Err(Failure::fatal(format!("invalid sampling rate: \"{v}\"")));
                }
            }
            Opt::AggregateInterval => {
                benchmarking_option_set = true;
                b.agg_interval = parse_int(v, "--aggregate-interval", 1, i64::from(i32::MAX))?;
            }
            Opt::ProgressTimestamp => {
                b.progress_timestamp = true;
                benchmarking_option_set = true;
            }
            Opt::LogPrefix => {
                benchmarking_option_set = true;
                b.log_prefix = Some(v.to_string());
            }
            Opt::ForeignKeys => {
                initialization_option_set = true;
                foreign_keys = true;
            }
            Opt::RandomSeed => {
                benchmarking_option_set = true;
                set_random_seed(&mut common, v, "--random-seed option")?;
            }
            Opt::ShowScript => {
                let found = find_builtin(v)?;
                return Ok(Action::PrintAndExit(builtin::show_script_text(found)));
            }
            Opt::Partitions => {
                initialization_option_set = true;
                init.partitions = parse_int(v, "--partitions", 0, i64::from(i32::MAX))? as i32;
            }
            Opt::PartitionMethod => {
                initialization_option_set = true;
                init.partition_method = if v.eq_ignore_ascii_case("range") {
                    PartitionMethod::Range
                } else if v.eq_ignore_ascii_case("hash") {
                    PartitionMethod::Hash
                } else {
                    return Err(Failure::fatal(format!(
                        "invalid partition method, expecting \"range\" or \"hash\", got: \"{v}\""
                    )));
                };
                partition_method_given = true;
            }
            Opt::FailuresDetailed => {
                benchmarking_option_set = true;
                b.failures_detailed = true;
            }
            Opt::MaxTries => {
                let n = crate::c_numbers::atoi(v);
                if n < 0 {
                    return Err(Failure::fatal(format!(
                        "invalid number of maximum tries: \"{v}\""
                    )));
                }
                benchmarking_option_set = true;
                b.max_tries = n as u32;
            }
            Opt::VerboseErrors => {
                benchmarking_option_set = true;
                b.verbose_errors = true;
            }
            Opt::ExitOnAbort => {
                benchmarking_option_set = true;
                b.exit_on_abort = true;
            }
            Opt::LatencyPercentiles => {
                benchmarking_option_set = true;
                b.latency_percentiles = Some(parse_percentiles(v)?);
            }
            Opt::TempInstance => common.temp_instance = true,
        }
    }

    // Default script.
    if b.scripts.is_empty() && !is_init_mode {
        add_script(&mut b, find_builtin("tpcb-like")?.script(), 1)?;
        benchmarking_option_set = true;
        b.internal_script_used = true;
    }

    if b.query_mode != QueryMode::Simple {
        for ws in &b.scripts {
            for cmd in &ws.script.commands {
                if let CommandKind::Sql(sql) = &cmd.kind {
                    if sql.parameters().count() > MAX_QUERY_PARAMS {
                        return Err(Failure::fatal(format!(
                            "statement has too many arguments (maximum is {MAX_QUERY_PARAMS}): {}",
                            sql.text
                        )));
                    }
                }
            }
        }
    }

    let total_weight: i64 = b.scripts.iter().map(|s| s.weight).sum();
    if total_weight == 0 && !is_init_mode {
        return Err(Failure::fatal("total script weight must not be zero"));
    }

    if b.nthreads > b.nclients {
        b.nthreads = b.nclients;
    }
    b.throttle_delay *= b.nthreads as f64;

    let mut positionals = positionals.into_iter();
    conn.dbname = match positionals.next() {
        Some(db) => db,
        None => env
            .var("PGDATABASE")
            .filter(|s| !s.is_empty())
            .or_else(|| env.var("PGUSER").filter(|s| !s.is_empty()))
            .or_else(|| env.os_user())
            .ok_or_else(|| Failure::fatal("could not get current user name"))?,
    };
    if let Some(extra) = positionals.next() {
        return Err(Failure::fatal(format!(
            "too many command-line arguments (first is \"{extra}\")"
        ))
        .with(
            Level::Hint,
            format!(
                "Try \"{} --help\" for more information.",
                crate::logging::progname()
            ),
        ));
    }

    if is_init_mode {
        if benchmarking_option_set {
            return Err(Failure::fatal(
                "some of the specified options cannot be used in initialization (-i) mode",
            ));
        }
        if init.partitions == 0 && partition_method_given {
            return Err(Failure::fatal(
                "--partition-method requires greater than zero --partitions",
            ));
        }
        if init.partitions > 0 && !partition_method_given {
            init.partition_method = PartitionMethod::Range;
        }
        let mut steps = init_steps.unwrap_or_else(|| "dtgvp".to_string());
        if b.no_vacuum {
            steps = steps.replace('v', " ");
        }
        if foreign_keys && !steps.contains('f') {
            steps.push('f');
        }
        init.steps = steps;
        init.jobs = init_jobs;
        return Ok(Action::Init { conn, init, common });
    }
    if initialization_option_set {
        return Err(Failure::fatal(
            "some of the specified options cannot be used in benchmarking mode",
        ));
    }
    if b.nxacts > 0 && b.duration > 0 {
        return Err(Failure::fatal(
            "specify either a number of transactions (-t) or a duration (-T), not both",
        ));
    }
    if b.nxacts <= 0 && b.duration <= 0 {
        b.nxacts = i64::from(DEFAULT_NXACTS);
    }
    if b.sample_rate > 0.0 && !b.use_log {
        return Err(Failure::fatal(
            "log sampling (--sampling-rate) is allowed only when logging transactions (-l)",
        ));
    }
    if b.sample_rate > 0.0 && b.agg_interval > 0 {
        return Err(Failure::fatal(
            "log sampling (--sampling-rate) and aggregation (--aggregate-interval) cannot be used at the same time",
        ));
    }
    if b.agg_interval > 0 && !b.use_log {
        return Err(Failure::fatal(
            "log aggregation is allowed only when actually logging transactions",
        ));
    }
    if !b.use_log && b.log_prefix.is_some() {
        return Err(Failure::fatal(
            "log file prefix (--log-prefix) is allowed only when logging transactions (-l)",
        ));
    }
    if b.duration > 0 && b.agg_interval > b.duration {
        return Err(Failure::fatal(format!(
            "number of seconds for aggregation ({}) must not be higher than test duration ({})",
            b.agg_interval, b.duration
        )));
    }
    if b.duration > 0 && b.agg_interval > 0 && b.duration % b.agg_interval != 0 {
        return Err(Failure::fatal(format!(
            "duration ({}) must be a multiple of aggregation interval ({})",
            b.duration, b.agg_interval
        )));
    }
    if b.progress_timestamp && b.progress == 0 {
        return Err(Failure::fatal(
            "--progress-timestamp is allowed only under --progress",
        ));
    }
    if b.max_tries == 0 && b.latency_limit == 0 && b.duration <= 0 {
        return Err(Failure::fatal(
            "an unlimited number of transaction tries can only be used with --latency-limit or a duration (-T)",
        ));
    }
    Ok(Action::Bench {
        conn,
        bench: Box::new(b),
        common,
    })
}

/// pgbench's `set_random_seed` for a given seed: announced as soon as it is parsed.
fn set_random_seed(common: &mut Common, value: &str, source: &str) -> Result<(), Failure> {
    match prng::parse_seed(value) {
        Ok(seed) => {
            common.random_seed = seed;
            common.seed_given = true;
            crate::logging::info(&format!("setting random seed to {seed}"));
            Ok(())
        }
        Err(e) => {
            let mut f = Failure::fatal(e.to_string());
            if let Some(d) = e.detail() {
                f = f.with(Level::Detail, d);
            }
            Err(f.with(
                Level::Error,
                format!("error while setting random seed from {source}"),
            ))
        }
    }
}

/// `checkInitSteps`.
fn check_init_steps(steps: &str) -> Result<(), Failure> {
    if steps.is_empty() {
        return Err(Failure::fatal("no initialization steps specified"));
    }
    for c in steps.chars() {
        if !"dtgGvpf ".contains(c) {
            return Err(
                Failure::fatal(format!("unrecognized initialization step \"{c}\""))
                    .with(Level::Detail, "Allowed step characters are: \"dtgGvpf\"."),
            );
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
