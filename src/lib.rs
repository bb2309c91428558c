//! pgbench-rs as a library: the command line ([`cli`]), benchmarking mode
//! ([`mod@bench`]: clients, statistics, report), initialisation mode ([`init`]),
//! sweeps and capacity searches ([`capacity`]: many runs in one process), the shell
//! every mode puts around a run ([`session`]), and the throwaway server of
//! `--temp-instance`. `main.rs` calls [`cli::run`] and reports its error
//! ([`diagnostic`]).

pub mod bench;
pub mod capacity;
pub mod cli;
pub mod clock;
pub mod connect;
pub mod diagnostic;
pub mod init;
pub mod logging;
pub mod metrics;
pub mod scenario;
pub mod session;
pub mod signals;
pub mod sys;
pub mod temp_instance;
pub mod version;
pub mod workload;
