//! The command line: what `main` calls. Parses arguments as pgbench does
//! ([`args`], [`options`]) and runs the chosen mode.

pub mod args;
pub mod help;
pub mod options;

use crate::logging;
use options::{Action, ProcessEnv};
use std::io::Write;

/// Runs pgbench-rs with this process's arguments; returns the exit status.
pub fn main() -> i32 {
    crate::sys::limit_malloc_arenas();
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let argv0 = argv
        .first()
        .cloned()
        .unwrap_or_else(|| "pgbench".to_string());
    logging::init_progname(&argv0);
    let action = match options::interpret(&argv0, &argv[1..], &ProcessEnv) {
        Ok(a) => a,
        Err(f) => {
            logging::raw(&f.render());
            return 1;
        }
    };
    match action {
        Action::Help => {
            let _ = std::io::stdout().write_all(help::usage_text(logging::progname()).as_bytes());
            0
        }
        Action::Version => {
            let _ = std::io::stdout().write_all(help::version_text().as_bytes());
            0
        }
        Action::PrintAndExit(text) => {
            logging::raw(&text);
            0
        }
        Action::Init { conn, init, common } => {
            if common.temp_instance {
                return crate::temp_instance::run_init(&init);
            }
            crate::init::interrupt::install();
            // pgbench's doConnect: prompt for a password if the server wants one.
            let mut args = conn.connect_args();
            let opts = match crate::bench::setup::connect_with_prompt(&mut args) {
                Ok((_probe, opts)) => opts,
                Err(msg) => {
                    logging::error(&msg);
                    logging::error("could not create connection for initialization");
                    return 1;
                }
            };
            match crate::init::run(&opts, &init, logging::progname()) {
                Ok(()) => 0,
                Err(e) => {
                    logging::raw(&e.render(logging::progname()));
                    1
                }
            }
        }
        Action::Bench {
            conn,
            bench,
            common,
        } => {
            if common.temp_instance {
                return crate::temp_instance::run_bench(&bench, &common);
            }
            crate::bench::run(conn.connect_args(), &bench, &common)
        }
    }
}
