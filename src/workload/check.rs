//! `--workload=NAME --check`: the workload's checks of its tables, as a report and a
//! verdict.

use super::Workload;
use crate::diagnostic::Diagnostic;
use pgbench_wire::ConnectArgs;

/// What `--workload=NAME --check` found: its report (for stdout) and whether every
/// check held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckReport {
    pub workload: &'static str,
    pub text: String,
    pub all_hold: bool,
}

impl CheckReport {
    /// A check that failed is an error, said after the report.
    pub fn verdict(&self) -> Result<(), CheckError> {
        if self.all_hold {
            Ok(())
        } else {
            Err(CheckError::Failed(self.workload))
        }
    }
}

/// Why `--check` did not pass (exit status 1).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("{0}")]
    Connect(#[from] pgbench_wire::ConnError),
    /// The checks could not run (a query failed, the tables are not a complete load).
    #[error("{0}")]
    Run(String),
    /// They ran, and one failed (the report says which).
    #[error("the {0} check failed")]
    Failed(&'static str),
}

impl Diagnostic for CheckError {
    fn render(&self, progname: &str) -> String {
        crate::logging::line(progname, crate::logging::Level::Error, &self.to_string())
    }
}

/// `--workload=NAME --check`: the workload's checks of its tables (and TPC-C's
/// consistency conditions), or why they could not run.
pub fn run_check(workload: &dyn Workload, args: &ConnectArgs) -> Result<CheckReport, CheckError> {
    let mut args = args.clone();
    let (mut conn, _) = crate::connect::connect_with_prompt(&mut args)?;
    // The command a failure suggests names the user's options, not the prompt's
    // password.
    args.password = None;
    let (text, all_hold) = workload.check(&mut conn, &args).map_err(CheckError::Run)?;
    Ok(CheckReport {
        workload: workload.name(),
        text,
        all_hold,
    })
}

/// `--check` without `--workload`: pgbench's tables ([`crate::init::check`]).
pub fn run_table_check(args: &ConnectArgs) -> Result<CheckReport, CheckError> {
    let mut args = args.clone();
    let (mut conn, _) = crate::connect::connect_with_prompt(&mut args)?;
    let (text, all_hold) = crate::init::check::check(&mut conn).map_err(CheckError::Run)?;
    Ok(CheckReport {
        workload: "pgbench",
        text,
        all_hold,
    })
}
