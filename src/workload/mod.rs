//! Workloads beyond pgbench's builtins, chosen with `--workload=NAME`. Each is a
//! generated pgbench script (so every option of a run applies to it unchanged, and
//! `--show-script=NAME` prints it) plus a prepare step for `-i`, configured by `-D`
//! options under the workload's own names. This module is the registry: the
//! interface is in [`api`] (a [`WorkloadFamily`] names its workloads and configures
//! one from `-D`; the configured [`Workload`] is everything the command line, init
//! mode and `--check` ask of it, and the engine's [`RunWorkload`] what a run asks),
//! which the families import; each family lives in a folder of its own
//! ([`sysbench`], [`tpcc`]), and [`FAMILIES`] lists them. Its part of the results is
//! in the results crate's `workload` module.

pub mod api;
mod check;
mod hint;
mod prepare;
pub mod sysbench;
pub mod tpcc;

pub use api::{
    RunPolicy, RunWorkload, ScriptContext, Workload, WorkloadError, WorkloadFamily, WorkloadScript,
};
pub use check::{run_check, run_table_check, CheckError, CheckReport};
pub use prepare::{PrepareError, PrepareOptions};

use std::fmt;
use std::sync::Arc;

/// Every family of workloads, in the order `--help` and errors list them. A new
/// workload is a folder beside these and a line here.
pub static FAMILIES: &[&dyn WorkloadFamily] = &[&sysbench::FAMILY, &tpcc::FAMILY];

/// A workload by name, not yet configured.
#[derive(Clone, Copy)]
pub struct Chosen {
    family: &'static dyn WorkloadFamily,
    name: &'static str,
}

impl fmt::Debug for Chosen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Chosen({})", self.name)
    }
}

impl Chosen {
    /// Its name, as `--workload` takes it.
    pub fn name(self) -> &'static str {
        self.name
    }

    /// The workload with its `-D` options applied (every `-D` must be one of them).
    pub fn configure(
        self,
        defines: &[(String, String)],
    ) -> Result<Arc<dyn Workload>, WorkloadError> {
        self.family.configure(self.name, defines)
    }
}

/// Every workload's name, in the order `--help` and errors list them.
pub fn names() -> Vec<&'static str> {
    FAMILIES.iter().flat_map(|f| f.names()).collect()
}

/// The workload called `name` (exactly).
pub fn find(name: &str) -> Result<Chosen, WorkloadError> {
    FAMILIES
        .iter()
        .find_map(|&family| {
            let name = family.names().into_iter().find(|n| *n == name)?;
            Some(Chosen { family, name })
        })
        .ok_or_else(|| WorkloadError::Unknown {
            name: name.to_string(),
            known: names().join(", "),
        })
}

/// The families as `--help` lists them.
pub fn help_list() -> String {
    let names: Vec<&str> = FAMILIES.iter().map(|f| f.help()).collect();
    names.join(", ")
}

/// What pgbench's option `--OPTION=VALUE` meant for a family's tool, if one has an
/// option of that name ([`WorkloadFamily::option_hint`]).
pub fn option_hint(option: &str, value: &str) -> Option<String> {
    FAMILIES.iter().find_map(|f| f.option_hint(option, value))
}

#[cfg(test)]
mod tests;
