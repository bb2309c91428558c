//! pgbench-rs as a library: the command line ([`cli`]), benchmarking mode ([`mod@bench`]:
//! clients, statistics, report), initialisation mode ([`init`]), and the throwaway
//! server of `--temp-instance`. `main.rs` only calls [`cli::main`].

pub mod bench;
pub mod cli;
pub mod connect;
pub mod init;
pub mod logging;
pub mod metrics;
pub mod signals;
pub mod sys;
pub mod temp_instance;
pub mod version;
pub mod workload;
