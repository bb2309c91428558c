//! The option loop of pgbench.c's `main()`: each option, in command-line order, moves
//! a [`Draft`], which keeps pgbench's raw values (zero meaning "not given", as its
//! globals do) until [`super::checks`] validates them and builds the typed plan.

use super::error::{ConfigError, MAX_SCRIPTS};
use super::values::{check_init_steps, parse_int, parse_positive, parse_script_weight};
use super::{Action, ConnArgs, Env};
use crate::bench::plan::{ServerStatsPlan, WeightedScript};
use crate::bench::stages::{StageError, Stages};
use crate::cli::args::Opt;
use crate::init::{InitOptions, PartitionMethod};
use pgbench_results::QueryMode;
use pgbench_script::ast::Script;
use pgbench_script::cnum::{atof, atoi};
use pgbench_script::error::ScriptError;
use pgbench_script::{builtin, parser, variables};

/// What the options said so far.
pub(super) struct Draft {
    pub is_init_mode: bool,
    pub init_steps: Option<String>,
    pub foreign_keys: bool,
    pub benchmarking_option_set: bool,
    pub initialization_option_set: bool,
    pub conn: ConnArgs,
    pub init: InitOptions,
    pub partition_method_given: bool,
    /// The first of pgbench's table options given (`-I`, `-F`, `--partitions`, ...): a
    /// workload's `-i` builds its own tables and refuses them rather than ignore them.
    pub table_option: Option<&'static str>,
    pub scripts: Vec<WeightedScript>,
    pub builtin_used: bool,
    pub nclients: i64,
    /// `-c` was given (a clients sweep would override it).
    pub clients_given: bool,
    pub nthreads: i64,
    pub nxacts: i64,
    pub duration: i64,
    pub is_connect: bool,
    pub query_mode: QueryMode,
    /// `-M` was given (a workload's own default applies otherwise).
    pub query_mode_given: bool,
    pub progress: i64,
    pub progress_timestamp: bool,
    pub report_per_command: bool,
    /// `-R` as typed (transactions per second).
    pub rate: Option<f64>,
    /// `-L` µs, 0 = off.
    pub latency_limit: i64,
    pub use_log: bool,
    pub log_prefix: Option<String>,
    pub sample_rate: f64,
    pub agg_interval: i64,
    /// 0 = unlimited.
    pub max_tries: u32,
    pub failures_detailed: bool,
    pub verbose_errors: bool,
    pub exit_on_abort: bool,
    /// pgbench 19's `--continue-on-error`.
    pub continue_on_error: bool,
    pub defines: Vec<(String, String)>,
    pub scale: i32,
    pub scale_given: bool,
    pub no_vacuum: bool,
    pub vacuum_all: bool,
    pub percentiles: Option<Vec<f64>>,
    pub export: crate::session::Export,
    pub debug: bool,
    pub random_seed: u64,
    /// The seed is a number (not the clock, `time` or `rand`).
    pub seed_given: bool,
    pub temp_instance: Option<crate::temp_instance::TempInstance>,
    /// `--worker=I/N`.
    pub worker: Option<(u32, u32)>,
    /// `--worker-timeout`, seconds.
    pub worker_timeout: Option<i64>,
    /// `--warmup`, seconds, 0 = none.
    pub warmup: i64,
    /// `--workload=NAME` (its `-D` options are read after the loop).
    pub workload: Option<crate::workload::Chosen>,
    /// `--show-script=NAME` of a workload: printed after the loop, with every `-D`.
    pub show_workload: Option<crate::workload::Chosen>,
    /// A `-D` was given (a workload's options are allowed with `-i`).
    pub defines_given: bool,
    /// `--metrics-listen`: host and port.
    pub metrics_listen: Option<(String, u16)>,
    /// `--metrics-linger`, seconds.
    pub metrics_linger: Option<i64>,
    /// `--check`: check the workload's tables, run nothing.
    pub check: bool,
    /// `--tables` was typed (a workload's tool's option, which getopt takes for
    /// `--tablespace`).
    pub tables_typed: bool,
    /// `--server-stats`, `--print-server-stats` (which implies it), `--print-warnings`.
    pub server_stats: Option<crate::bench::plan::ServerStatsPlan>,
    pub print_warnings: bool,
    /// `--history[=STORE]`: `Some(None)` for the default store.
    pub history: Option<Option<String>>,
    /// `--tag KEY=VALUE`, in order.
    pub tags: Vec<(String, String)>,
    /// `--reconnect`, and `--reconnect-timeout` in seconds.
    pub reconnect_on_loss: bool,
    pub reconnect_timeout: Option<i64>,
    /// `--os-threads`: how many OS threads run the `-j` threads.
    pub os_threads: Option<i64>,
    /// `--sweep`, `--find-max-rate` and their companions.
    pub capacity: crate::capacity::options::CapacityDraft,
    /// `--scenarios=FILE`, and the scenarios read from it ([`super::scenarios`]).
    pub scenarios_file: Option<String>,
    pub scenario_plans: Vec<crate::bench::plan::ScenarioPlan>,
    /// `--rate-stages`, `--client-stages`.
    pub rate_stages: Option<crate::bench::stages::Stages>,
    pub client_stages: Option<crate::bench::stages::Stages>,
    /// The clients `--client-stages` starts from (`-c`, else 1), kept when the check
    /// makes `-c` the most the stages ask for.
    pub client_stages_start: f64,
}

impl Draft {
    /// pgbench's defaults, with the seed from the environment or the clock
    /// (`seed_given`: from the environment, as a number).
    pub fn new(random_seed: u64, seed_given: bool) -> Draft {
        Draft {
            is_init_mode: false,
            init_steps: None,
            foreign_keys: false,
            benchmarking_option_set: false,
            initialization_option_set: false,
            conn: ConnArgs::default(),
            init: InitOptions::default(),
            partition_method_given: false,
            table_option: None,
            scripts: Vec::new(),
            builtin_used: false,
            nclients: 1,
            clients_given: false,
            nthreads: 1,
            nxacts: 0,
            duration: 0,
            is_connect: false,
            query_mode: QueryMode::Simple,
            query_mode_given: false,
            progress: 0,
            progress_timestamp: false,
            report_per_command: false,
            rate: None,
            latency_limit: 0,
            use_log: false,
            log_prefix: None,
            sample_rate: 0.0,
            agg_interval: 0,
            max_tries: 1,
            failures_detailed: false,
            verbose_errors: false,
            exit_on_abort: false,
            continue_on_error: false,
            defines: Vec::new(),
            scale: 1,
            scale_given: false,
            no_vacuum: false,
            vacuum_all: false,
            percentiles: None,
            export: Default::default(),
            debug: false,
            random_seed,
            seed_given,
            temp_instance: None,
            worker: None,
            worker_timeout: None,
            warmup: 0,
            workload: None,
            show_workload: None,
            defines_given: false,
            metrics_listen: None,
            metrics_linger: None,
            check: false,
            tables_typed: false,
            server_stats: None,
            print_warnings: false,
            history: None,
            tags: Vec::new(),
            reconnect_on_loss: false,
            reconnect_timeout: None,
            os_threads: None,
            capacity: Default::default(),
            scenarios_file: None,
            scenario_plans: Vec::new(),
            rate_stages: None,
            client_stages: None,
            client_stages_start: 1.0,
        }
    }

    /// Applies one option. `Some(action)` ends the loop at once (`-b list`,
    /// `--show-script`); `notices` gets what pgbench prints while parsing.
    pub fn apply(
        &mut self,
        opt: Opt,
        v: &str,
        env: &dyn Env,
        notices: &mut Vec<String>,
    ) -> Result<Option<Action>, ConfigError> {
        use Opt::*;
        match opt {
            Builtin | File | SelectOnly | SkipSomeUpdates | ShowScript => {
                return self.script_option(opt, v, env)
            }
            Client | Jobs | Connect | Transactions | Time | Rate | LatencyLimit | Protocol
            | MaxTries | FailuresDetailed | VerboseErrors | ExitOnAbort | ContinueOnError
            | Define | Worker | WorkerTimeout | Warmup | Reconnect | ReconnectTimeout
            | OsThreads | RateStages | ClientStages => self.run_option(opt, v, env)?,
            Log | LogPrefix | SamplingRate | AggregateInterval | Progress | ProgressTimestamp
            | ReportPerCommand | LatencyPercentiles | ExportJson | ExportHtml | MetricsListen
            | MetricsLinger | ServerStats | PrintServerStats | PrintWarnings | History | Tag => {
                self.output_option(opt, v)?
            }
            Initialize | InitSteps | Fillfactor | Quiet | UnloggedTables | Tablespace
            | IndexTablespace | ForeignKeys | Partitions | PartitionMethod | Resume | Shard => {
                self.init_option(opt, v)?
            }
            Host => self.conn.host = Some(v.to_string()),
            Port => self.conn.port = Some(v.to_string()),
            Username => self.conn.user = Some(v.to_string()),
            Debug => self.debug = true,
            // Durable wins, whichever comes first.
            TempInstance => {
                self.temp_instance = self
                    .temp_instance
                    .or(Some(crate::temp_instance::TempInstance::Fast))
            }
            TempInstanceDurable => {
                self.temp_instance = Some(crate::temp_instance::TempInstance::Durable)
            }
            Workload => self.workload = Some(crate::workload::find(v)?),
            Scenarios => self.scenarios_file = Some(v.to_string()),
            Check => self.check = true,
            Sweep | Repeat | FindMaxRate | SearchTolerance | SearchSteps | FailIfBelow => {
                self.benchmarking_option_set = true;
                let c = &mut self.capacity;
                match opt {
                    Sweep => c.sweep(v)?,
                    Repeat => c.repeat(v)?,
                    FindMaxRate => c.find_max_rate(v)?,
                    SearchTolerance => c.search_tolerance(v)?,
                    SearchSteps => c.search_steps(v)?,
                    _ => c.fail_if_below(v)?,
                }
            }
            NoVacuum => self.no_vacuum = true,
            VacuumAll => {
                self.benchmarking_option_set = true;
                self.vacuum_all = true;
            }
            Scale => {
                self.scale_given = true;
                self.scale = parse_positive(v, "-s/--scale", 1)? as i32;
                self.init.scale = self.scale;
            }
            RandomSeed => {
                self.benchmarking_option_set = true;
                self.random_seed = super::values::parse_seed(v, "--random-seed option")?;
                self.seed_given = super::values::seed_is_number(v);
                // pgbench announces the seed as soon as it is parsed.
                notices.push(format!("setting random seed to {}", self.random_seed));
            }
        }
        Ok(None)
    }

    /// `-b`, `-f`, `-S`, `-N`, `--show-script`.
    fn script_option(
        &mut self,
        opt: Opt,
        v: &str,
        env: &dyn Env,
    ) -> Result<Option<Action>, ConfigError> {
        match opt {
            Opt::Builtin => {
                if v == "list" {
                    return Ok(Some(Action::PrintAndExit(builtin::list_text())));
                }
                let (name, weight) = parse_script_weight(v)?;
                self.add_builtin(name, weight)?;
            }
            Opt::File => {
                let (path, weight) = parse_script_weight(v)?;
                let text = env.read_file(path).map_err(|e| ConfigError::OpenFile {
                    path: path.to_string(),
                    reason: crate::sys::strerror(&e),
                })?;
                self.add_script(parser::parse_script(path, path, &text)?, weight)?;
            }
            Opt::SelectOnly => self.add_builtin("select-only", 1)?,
            Opt::SkipSomeUpdates => self.add_builtin("simple-update", 1)?,
            Opt::ShowScript => {
                let found = match builtin::find(v) {
                    Ok(found) => found,
                    Err(e) => match crate::workload::find(v) {
                        Ok(workload) => {
                            self.show_workload = Some(workload);
                            return Ok(None);
                        }
                        Err(_) => return Err(e.into()),
                    },
                };
                return Ok(Some(Action::PrintAndExit(builtin::show_script_text(found))));
            }
            _ => unreachable!("not a script option: {opt:?}"),
        }
        self.benchmarking_option_set = true;
        Ok(None)
    }

    /// A builtin script by (a prefix of) its name.
    pub fn add_builtin(&mut self, name: &str, weight: i64) -> Result<(), ConfigError> {
        self.add_script(builtin::find(name)?.script(), weight)?;
        self.builtin_used = true;
        Ok(())
    }

    /// What a workload's script depends on besides its options.
    pub(super) fn script_context(&self) -> crate::workload::ScriptContext {
        crate::workload::ScriptContext {
            query_mode: self.query_mode,
            clients: self.nclients as usize,
            workers: self.worker.map_or(1, |(_, count)| count as usize),
        }
    }

    pub(super) fn add_script(&mut self, script: Script, weight: i64) -> Result<(), ConfigError> {
        if script.commands.is_empty() {
            return Err(ScriptError::EmptyCommandList {
                script: script.name,
            }
            .into());
        }
        if self.scripts.len() >= MAX_SCRIPTS {
            return Err(ConfigError::TooManyScripts);
        }
        self.scripts.push(WeightedScript {
            script,
            weight,
            untimed_sleeps: false,
            prepare_on_connect: false,
        });
        Ok(())
    }

    /// Options that shape how clients run.
    fn run_option(&mut self, opt: Opt, v: &str, env: &dyn Env) -> Result<(), ConfigError> {
        match opt {
            Opt::Client => {
                let n = parse_positive(v, "-c/--client", 1)?;
                check_open_files(n, env)?;
                self.nclients = n;
                self.clients_given = true;
            }
            Opt::Jobs => {
                // pgbench-rs: with -i, -j sets the number of loading connections, so it
                // is not a benchmarking-only option here.
                self.nthreads = parse_positive(v, "-j/--jobs", 1)?;
                self.init.jobs = Some(self.nthreads as u32);
                return Ok(());
            }
            Opt::Connect => self.is_connect = true,
            Opt::Transactions => self.nxacts = parse_positive(v, "-t/--transactions", 1)?,
            Opt::Time => self.duration = parse_positive(v, "-T/--time", 1)?,
            Opt::Rate => {
                let rate = atof(v);
                if rate.is_nan() || rate <= 0.0 {
                    return Err(ConfigError::Rate(v.to_string()));
                }
                self.rate = Some(rate);
            }
            Opt::LatencyLimit => {
                let ms = atof(v);
                if ms.is_nan() || ms <= 0.0 {
                    return Err(ConfigError::LatencyLimit(v.to_string()));
                }
                self.latency_limit = (ms * 1000.0) as i64;
            }
            Opt::Protocol => {
                self.query_mode = match v {
                    "simple" => QueryMode::Simple,
                    "extended" => QueryMode::Extended,
                    "prepared" => QueryMode::Prepared,
                    _ => return Err(ConfigError::QueryMode(v.to_string())),
                };
                self.query_mode_given = true;
            }
            Opt::MaxTries => {
                let n = atoi(v);
                if n < 0 {
                    return Err(ConfigError::MaxTries(v.to_string()));
                }
                self.max_tries = n as u32;
            }
            Opt::FailuresDetailed => self.failures_detailed = true,
            Opt::VerboseErrors => self.verbose_errors = true,
            Opt::ExitOnAbort => self.exit_on_abort = true,
            Opt::ContinueOnError => self.continue_on_error = true,
            Opt::Define => {
                // Not a benchmarking-only option when it configures a workload's -i.
                self.define(v)?;
                self.defines_given = true;
                return Ok(());
            }
            Opt::Worker => self.worker = Some(super::values::parse_worker(v)?),
            Opt::WorkerTimeout => {
                self.worker_timeout = Some(parse_positive(v, "--worker-timeout", 1)?);
            }
            Opt::Warmup => self.warmup = parse_positive(v, "--warmup", 0)?,
            Opt::RateStages => {
                self.rate_stages = Some(stage_list(v, "--rate-stages", Stages::parse)?);
            }
            Opt::ClientStages => {
                self.client_stages = Some(stage_list(v, "--client-stages", Stages::parse_clients)?);
            }
            Opt::Reconnect => self.reconnect_on_loss = true,
            Opt::ReconnectTimeout => {
                self.reconnect_timeout = Some(parse_positive(v, "--reconnect-timeout", 1)?);
            }
            Opt::OsThreads => self.os_threads = Some(parse_positive(v, "--os-threads", 1)?),
            _ => unreachable!("not a run option: {opt:?}"),
        }
        self.benchmarking_option_set = true;
        Ok(())
    }

    /// `-D NAME=VALUE`.
    fn define(&mut self, v: &str) -> Result<(), ConfigError> {
        let Some((name, val)) = v
            .split_once('=')
            .filter(|(n, v)| !n.is_empty() && !v.is_empty())
        else {
            return Err(ConfigError::Define(v.to_string()));
        };
        if !variables::is_valid_name(name) && !self.defines.iter().any(|(n, _)| n == name) {
            return Err(ConfigError::DefineName(name.to_string()));
        }
        self.defines.push((name.to_string(), val.to_string()));
        Ok(())
    }

    /// Options that shape what is written during and after the run.
    fn output_option(&mut self, opt: Opt, v: &str) -> Result<(), ConfigError> {
        // The endpoint serves a load's progress as well as a run's.
        if !matches!(opt, Opt::MetricsListen | Opt::MetricsLinger) {
            self.benchmarking_option_set = true;
        }
        match opt {
            Opt::Log => self.use_log = true,
            Opt::LogPrefix => self.log_prefix = Some(v.to_string()),
            Opt::SamplingRate => {
                self.sample_rate = atof(v);
                if self.sample_rate.is_nan() || self.sample_rate <= 0.0 || self.sample_rate > 1.0 {
                    return Err(ConfigError::SamplingRate(v.to_string()));
                }
            }
            Opt::AggregateInterval => {
                self.agg_interval = parse_positive(v, "--aggregate-interval", 1)?;
            }
            Opt::Progress => self.progress = parse_positive(v, "-P/--progress", 1)?,
            Opt::ProgressTimestamp => self.progress_timestamp = true,
            Opt::ReportPerCommand => self.report_per_command = true,
            Opt::LatencyPercentiles => {
                self.percentiles = Some(super::values::parse_percentiles(v)?);
            }
            Opt::ExportJson => self.export.json = Some(v.to_string()),
            Opt::ExportHtml => self.export.html = Some(v.to_string()),
            Opt::MetricsListen => {
                let listen =
                    crate::metrics::parse_listen(v).ok_or_else(|| ConfigError::InvalidValue {
                        option: "--metrics-listen",
                        value: v.to_string(),
                    })?;
                self.metrics_listen = Some(listen);
            }
            Opt::MetricsLinger => {
                self.metrics_linger = Some(super::values::parse_int(
                    v,
                    "--metrics-linger",
                    0,
                    i64::from(i32::MAX),
                )?);
            }
            Opt::ServerStats => {
                self.server_stats
                    .get_or_insert(ServerStatsPlan { print: false });
            }
            Opt::PrintServerStats => self.server_stats = Some(ServerStatsPlan { print: true }),
            Opt::PrintWarnings => self.print_warnings = true,
            Opt::History => self.history = Some(Some(v.to_string()).filter(|s| !s.is_empty())),
            Opt::Tag => self
                .tags
                .push(crate::session::history::parse_tag(v).map_err(ConfigError::Tag)?),
            _ => unreachable!("not an output option: {opt:?}"),
        }
        Ok(())
    }

    /// Initialization-mode options.
    fn init_option(&mut self, opt: Opt, v: &str) -> Result<(), ConfigError> {
        match opt {
            Opt::Initialize => {
                self.is_init_mode = true;
                return Ok(());
            }
            Opt::InitSteps => {
                check_init_steps(v)?;
                self.init_steps = Some(v.to_string());
            }
            Opt::Fillfactor => {
                self.init.fillfactor = parse_int(v, "-F/--fillfactor", 10, 100)? as i32
            }
            Opt::Quiet => self.init.quiet = true,
            // Ours, for every loader: not a table option.
            Opt::Resume => {
                self.init.resumable.resume = true;
                self.initialization_option_set = true;
                return Ok(());
            }
            Opt::Shard => {
                let shard = crate::init::resume::Shard::parse(v).map_err(ConfigError::Shard)?;
                self.init.resumable.shard = Some(shard);
                self.initialization_option_set = true;
                return Ok(());
            }
            Opt::UnloggedTables => self.init.unlogged_tables = true,
            Opt::Tablespace => self.init.tablespace = Some(v.to_string()),
            Opt::IndexTablespace => self.init.index_tablespace = Some(v.to_string()),
            Opt::ForeignKeys => self.foreign_keys = true,
            Opt::Partitions => {
                self.init.partitions = parse_int(v, "--partitions", 0, i64::from(i32::MAX))? as i32;
            }
            Opt::PartitionMethod => {
                self.init.partition_method = if v.eq_ignore_ascii_case("range") {
                    PartitionMethod::Range
                } else if v.eq_ignore_ascii_case("hash") {
                    PartitionMethod::Hash
                } else {
                    return Err(ConfigError::PartitionMethod(v.to_string()));
                };
                self.partition_method_given = true;
            }
            _ => unreachable!("not an init option: {opt:?}"),
        }
        if opt != Opt::Quiet && self.table_option.is_none() {
            self.table_option = Some(table_option_name(opt));
        }
        self.initialization_option_set = true;
        Ok(())
    }
}

/// The `-c` check on open files (pgbench 18 raises the soft limit when it can).
pub(super) fn check_open_files(nclients: i64, env: &dyn Env) -> Result<(), ConfigError> {
    let need = nclients.saturating_add(3);
    env.ensure_open_files(need as u64).map_err(|e| match e {
        crate::sys::LimitError::Hard(limit) => ConfigError::OpenFilesLimit { need, limit },
        crate::sys::LimitError::Raise(reason) => ConfigError::OpenFilesRaise { need, reason },
    })
}

/// How pgbench's messages name a table option.
fn table_option_name(opt: Opt) -> &'static str {
    match opt {
        Opt::InitSteps => "-I/--init-steps",
        Opt::Fillfactor => "-F/--fillfactor",
        Opt::UnloggedTables => "--unlogged-tables",
        Opt::Tablespace => "--tablespace",
        Opt::IndexTablespace => "--index-tablespace",
        Opt::ForeignKeys => "--foreign-keys",
        Opt::Partitions => "--partitions",
        _ => "--partition-method",
    }
}

/// `--rate-stages`, `--client-stages`: the list, or why not in a `detail:` line.
fn stage_list(
    v: &str,
    option: &'static str,
    parse: fn(&str) -> Result<Stages, StageError>,
) -> Result<Stages, ConfigError> {
    parse(v).map_err(|e| ConfigError::Stages {
        option,
        value: v.to_string(),
        detail: e.to_string(),
    })
}
