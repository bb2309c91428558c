//! `pgbench-report`: reads the results files pgbench-rs writes (`--export-json`) and
//! turns stock pgbench's output into them. Verbs: `show`, `import`, `compare`, `html`,
//! `merge`, `check`, and `history` (the run history's subcommands).
//! This file only hands argv to the verbs (their command line: `cli`) and maps their outcome to an exit status;
//! the work is in the `pgbench-results` crate.

mod check;
mod cli;
mod error;
mod history;
mod io;
mod sweeps;
mod verbs;

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args_os()
        .skip(1)
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match verbs::run(&args) {
        Ok(status) => ExitCode::from(status),
        Err(e) => {
            eprintln!("pgbench-report: error: {e}");
            ExitCode::from(error::EXIT_ERROR)
        }
    }
}
