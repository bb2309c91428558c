//! TPC-C as HammerDB's timed driver runs it on PostgreSQL (`pgoltp.tcl`), in one of two
//! modes (`-D mode=`):
//!
//! - `hammerdb` (the default): HammerDB's own server-side work, so NOPM means what
//!   HammerDB's does: its set-based PL/pgSQL functions `neword`, `payment`, `delivery`,
//!   `ostat` and `slev` ([`hammerdb_routines`], or PROCEDUREs called with CALL under
//!   `-D storedprocs=1`), its draws, its home warehouses and its load's values, with
//!   HammerDB's own deviations from TPC-C kept (they are part of its figures).
//! - `spec`: TPC-C by the text (clause 2's transactions row by row, real last-name
//!   lookups, real rollbacks, NURand): this workload's `tpcc_*` functions
//!   ([`spec_functions`]). Stricter, and not comparable with HammerDB's figures.
//!
//! Either way a run is the five transactions in HammerDB's proportions (of every 23: 10
//! new orders, 10 payments, one delivery, one stock level, one order status), each a
//! pgbench script ([`scripts`]) that draws its parameters with pgbench expressions from
//! the client's seeded generator and calls the mode's routine.
//!
//! Init (`-i --workload=tpcc -s W`) is [`init`], which marks a load complete at its
//! end ([`marker`]: a run refuses any other); the result line and time profile after
//! the report are [`monitor`], [`run`] and the results crate's
//! `workload::tpcc`; `--check` is [`check`];
//! `-D vacuum=1` is [`vacuum`].

pub mod check;
pub mod hammerdb_routines;
pub mod init;
pub mod marker;
pub mod monitor;
pub mod rows;
pub mod run;
pub mod schema;
pub mod scripts;
pub mod spec_functions;
pub mod vacuum;

use super::api::{
    RunPolicy, RunWorkload, ScriptContext, Workload, WorkloadError, WorkloadFamily, WorkloadScript,
};
use super::prepare::{PrepareError, PrepareOptions};
use crate::bench::observer::RunObserver;
use pgbench_results::workload::tpcc::ProfileLayout;
use pgbench_results::QueryMode;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};
use std::sync::Arc;

/// Its `--workload` name.
pub const NAME: &str = "tpcc";

/// The `-D` options: HammerDB's settings under HammerDB's names (its `pg_` prefix
/// dropped), with its defaults, plus `mode`.
pub const DEFINES: &[(&str, &str)] = &[
    ("mode", "hammerdb"),
    ("allwarehouse", "0"),
    ("keyandthink", "0"),
    ("storedprocs", "0"),
    ("partition", "0"),
    ("vacuum", "0"),
    ("timeprofile", "1"),
    ("raiseerror", "0"),
];

/// TPC-C in the registry.
pub struct Family;

pub static FAMILY: Family = Family;

impl WorkloadFamily for Family {
    fn names(&self) -> Vec<&'static str> {
        vec![NAME]
    }

    fn help(&self) -> &'static str {
        "HammerDB's TPC-C (tpcc)"
    }

    fn configure(
        &self,
        _: &'static str,
        defines: &[(String, String)],
    ) -> Result<Arc<dyn Workload>, WorkloadError> {
        Ok(Arc::new(Config::new(defines)?))
    }
}

/// Whose transactions a run runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// HammerDB's functions (or procedures), draws and load.
    Hammerdb,
    /// TPC-C by the text.
    Spec,
}

/// The `-D` options.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub mode: Mode,
    /// HammerDB's "Use All Warehouses": the warehouses are split among the clients and
    /// each transaction picks one of the client's share.
    pub allwarehouse: bool,
    /// HammerDB's "Keying and Thinking Time" (TPC-C 5.2.5): pauses before each
    /// transaction, outside its latency, cut short at the end of `-T`.
    pub keyandthink: bool,
    /// HammerDB's "Stored Procedures": PROCEDUREs called with CALL (mode hammerdb).
    pub storedprocs: bool,
    /// HammerDB's "Partition Order Line Table" (`-i`: from 200 warehouses).
    pub partition: bool,
    /// HammerDB's "Checkpoint when complete": CHECKPOINT and VACUUM after the run.
    pub vacuum: bool,
    /// The time profile after the result line: pgbench-rs's table, HammerDB 6's
    /// `xtprof` summary layout, or none.
    pub timeprofile: ProfileLayout,
    /// HammerDB's "Exit on Error": a failed transaction stops its client (mode
    /// hammerdb; TPC-C by the text always stops).
    pub raiseerror: bool,
}

fn invalid(name: &str, value: &str, why: &str) -> WorkloadError {
    WorkloadError::InvalidValue {
        workload: NAME,
        name: name.to_string(),
        value: value.to_string(),
        why: why.to_string(),
    }
}

fn switch(name: &str, value: &str) -> Result<bool, WorkloadError> {
    match value {
        "0" | "false" | "off" => Ok(false),
        "1" | "true" | "on" => Ok(true),
        _ => Err(invalid(name, value, "expecting 0 or 1")),
    }
}

impl Config {
    /// From `-D` (every one must be of [`DEFINES`]; later ones win).
    pub fn new(defines: &[(String, String)]) -> Result<Config, WorkloadError> {
        let mut c = Config {
            mode: Mode::Hammerdb,
            allwarehouse: false,
            keyandthink: false,
            storedprocs: false,
            partition: false,
            vacuum: false,
            timeprofile: ProfileLayout::Table,
            raiseerror: false,
        };
        for (name, value) in defines {
            let v = value.as_str();
            match name.as_str() {
                "mode" => {
                    c.mode = match v {
                        "hammerdb" => Mode::Hammerdb,
                        "spec" => Mode::Spec,
                        _ => return Err(invalid(name, v, "expecting hammerdb or spec")),
                    }
                }
                "allwarehouse" => c.allwarehouse = switch(name, v)?,
                "keyandthink" => c.keyandthink = switch(name, v)?,
                "storedprocs" => c.storedprocs = switch(name, v)?,
                "partition" => c.partition = switch(name, v)?,
                "vacuum" => c.vacuum = switch(name, v)?,
                "raiseerror" => c.raiseerror = switch(name, v)?,
                "timeprofile" => {
                    c.timeprofile = match v {
                        "xtprof" => ProfileLayout::Xtprof,
                        _ if switch(name, v)? => ProfileLayout::Table,
                        _ => ProfileLayout::None,
                    }
                }
                _ => {
                    let known: Vec<&str> = DEFINES.iter().map(|(n, _)| *n).collect();
                    return Err(WorkloadError::UnknownOption {
                        workload: NAME,
                        name: name.clone(),
                        known: known.join(", "),
                    });
                }
            }
        }
        if c.storedprocs && c.mode == Mode::Spec {
            return Err(WorkloadError::Unsupported {
                workload: NAME,
                message: "-D storedprocs=1 is HammerDB's and needs -D mode=hammerdb".into(),
            });
        }
        Ok(c)
    }

    /// The scripts' variables: the switches as 0 or 1, and each client's state before
    /// its first transaction (no home warehouse drawn yet, no thinking time owed).
    pub fn variables(&self) -> Vec<(String, String)> {
        let bit = |b: bool| if b { "1" } else { "0" }.to_string();
        vec![
            ("allwarehouse".into(), bit(self.allwarehouse)),
            ("keyandthink".into(), bit(self.keyandthink)),
            ("home".into(), "0".into()),
            ("think_ms".into(), "0".into()),
        ]
    }

    /// The query mode a run uses unless `-M` says otherwise: each routine prepared
    /// once per connection, as HammerDB prepares its functions; but its CALLs of
    /// procedures are sent as plain text.
    pub fn default_query_mode(&self) -> QueryMode {
        if self.storedprocs {
            QueryMode::Simple
        } else {
            QueryMode::Prepared
        }
    }

    /// The scripts of a run, with their weights.
    pub fn scripts(&self, ctx: ScriptContext) -> Vec<WorkloadScript> {
        scripts::scripts(self, ctx)
            .into_iter()
            .map(|s| WorkloadScript {
                name: s.name.to_string(),
                description: format!("<workload tpcc: {}>", s.description),
                text: s.text,
                weight: s.weight,
                untimed_sleeps: true,
                prepare_on_connect: false,
            })
            .collect()
    }

    /// `--show-script=tpcc`: every script, with its weight.
    pub fn show_scripts(&self, ctx: ScriptContext) -> String {
        self.scripts(ctx)
            .iter()
            .map(|s| {
                format!(
                    "-- {}: {}, weight {}\n{}\n",
                    s.name, s.description, s.weight, s.text
                )
            })
            .collect()
    }

    /// Each script of a run (by its place in [`Config::scripts`]) with its transaction's
    /// name in HammerDB's time profile.
    pub fn profile(&self) -> Vec<(usize, String)> {
        scripts::PROFILE
            .iter()
            .filter(|(mode, _)| *mode == self.mode)
            .flat_map(|(_, names)| names.iter())
            .enumerate()
            .map(|(i, n)| (i, n.to_string()))
            .collect()
    }

    /// Before a run: the tables are a complete load ([`marker`]) with the routines of
    /// this mode (`-i` creates those of the mode it is given), else what to run
    /// (`target`: the connection options the user gave).
    pub fn check_tables(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(), String> {
        let warehouses = marker::require_complete(conn, target)?;
        let (name, kind, what) = self.new_order_routine();
        let found = conn
            .query_rows(&format!(
                "select count(*) from pg_catalog.pg_proc p where p.proname = '{name}' \
                 and p.prokind = '{kind}' and pg_catalog.pg_function_is_visible(p.oid)"
            ))
            .map_err(|e| format!("could not look for the {what} {name}: {e}"))?;
        let count = found
            .first()
            .and_then(|r| r.first().cloned().flatten())
            .unwrap_or_default();
        if count == "0" {
            let options = format!("-s {warehouses}{}", self.load_options());
            return Err(format!(
                "the database has no {what} {name}, which this mode's transactions call; \
                 run \"{}\" first",
                crate::workload::hint::prepare_command(NAME, &options, target)
            ));
        }
        Ok(())
    }

    /// The new order's routine of this mode: its name, `prokind` and what it is.
    fn new_order_routine(&self) -> (&'static str, &'static str, &'static str) {
        match (self.mode, self.storedprocs) {
            (Mode::Hammerdb, false) => ("neword", "f", "function"),
            (Mode::Hammerdb, true) => ("neword", "p", "procedure"),
            (Mode::Spec, _) => ("tpcc_new_order", "f", "function"),
        }
    }

    /// The `-D` options of `-i` that create this mode's routines.
    fn load_options(&self) -> &'static str {
        match (self.mode, self.storedprocs) {
            (Mode::Hammerdb, false) => "",
            (Mode::Hammerdb, true) => " -D storedprocs=1",
            (Mode::Spec, _) => " -D mode=spec",
        }
    }

    /// The routines `--check` looks for in this mode.
    pub fn routine_names(&self) -> &'static [&'static str] {
        match self.mode {
            Mode::Hammerdb => &hammerdb_routines::NAMES,
            Mode::Spec => &spec_functions::NAMES,
        }
    }

    /// Whether a failed transaction (a deadlock, say) is counted and the client goes
    /// on, as HammerDB's virtual users go on after an error (`pg_raiseerror false`, its
    /// default). TPC-C by the text orders its locks and rolls back only on purpose: an
    /// error there is a fault, and aborts the client.
    pub fn continues_on_error(&self) -> bool {
        self.mode == Mode::Hammerdb && !self.raiseerror
    }
}

impl RunWorkload for Config {
    fn name(&self) -> &'static str {
        NAME
    }

    fn observers(&self) -> Vec<Box<dyn RunObserver>> {
        run::observers(self)
    }

    fn check_tables(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(), String> {
        Config::check_tables(self, conn, target)
    }

    fn table_scale(&self, conn: &mut Connection) -> Option<i32> {
        monitor::warehouses(conn).ok()
    }
}

impl Workload for Config {
    /// HammerDB's query mode and its error handling; per-transaction percentiles in
    /// its time profile; no vacuum before a run.
    fn policy(&self) -> RunPolicy {
        RunPolicy {
            query_mode: Some(self.default_query_mode()),
            continue_on_error: self.continues_on_error(),
            keep_histograms: true,
            skip_vacuum: true,
        }
    }

    fn scripts(&self, ctx: ScriptContext) -> Vec<WorkloadScript> {
        Config::scripts(self, ctx)
    }

    fn script_text(&self, ctx: ScriptContext) -> String {
        self.show_scripts(ctx)
    }

    fn variables(&self) -> Vec<(String, String)> {
        Config::variables(self)
    }

    fn prepare(
        &self,
        main: Connection,
        options: &ConnectOptions,
        how: &PrepareOptions,
    ) -> Result<(), PrepareError> {
        init::prepare(self, main, options, how)
    }

    fn incomplete_note(&self) -> String {
        "the tpcc load did not complete: a run and --check refuse its tables until \
         -i --workload=tpcc completes"
            .to_string()
    }

    fn check(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(String, bool), String> {
        check::check(self, conn, target)
    }
}

/// The index in the run's scripts of the new orders that commit (both modes).
pub const NEW_ORDER_SCRIPT: usize = 0;

#[cfg(test)]
mod tests {
    use super::*;

    fn d(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_options_are_hammerdbs_and_nothing_else() {
        let c = Config::new(&d(&[("allwarehouse", "1")])).unwrap();
        assert!(c.allwarehouse && c.mode == Mode::Hammerdb);
        assert_eq!(c.default_query_mode(), QueryMode::Prepared);
        assert!(Config::new(&d(&[("keyandthink", "2")])).is_err());
        assert!(Config::new(&d(&[("warehouses", "1")])).is_err());
        assert!(Config::new(&d(&[("mode", "tpcc")])).is_err());
        let procs = Config::new(&d(&[("storedprocs", "true")])).unwrap();
        assert_eq!(procs.default_query_mode(), QueryMode::Simple);
        let err = Config::new(&d(&[("storedprocs", "1"), ("mode", "spec")])).unwrap_err();
        assert!(err.to_string().contains("needs -D mode=hammerdb"), "{err}");
        let layout = |v| Config::new(&d(&[("timeprofile", v)])).unwrap().timeprofile;
        assert_eq!(layout("xtprof"), ProfileLayout::Xtprof);
        assert_eq!(layout("0"), ProfileLayout::None);
        assert_eq!(layout("on"), ProfileLayout::Table);
        assert!(c.continues_on_error());
        let stops = Config::new(&d(&[("raiseerror", "1")])).unwrap();
        assert!(!stops.continues_on_error());
    }

    #[test]
    fn each_mode_names_its_scripts_in_the_profile() {
        let hammerdb = Config::new(&[]).unwrap().profile();
        let names: Vec<&str> = hammerdb.iter().map(|(_, n)| n.as_str()).collect();
        assert_eq!(names, ["neword", "payment", "delivery", "slev", "ostat"]);
        let spec = Config::new(&d(&[("mode", "spec")])).unwrap().profile();
        assert_eq!(spec.len(), 6);
        assert_eq!(
            (spec[0].1.as_str(), spec[1].1.as_str()),
            ("neword", "neword")
        );
    }
}
