//! pgbench-rs as a library: the command line, the benchmark runner, its statistics and
//! report, and initialisation mode. `main.rs` only calls [`cli::main`].

pub mod init;
