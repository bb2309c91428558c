//! What a workload beyond pgbench's builtins (`--workload`) adds to a run's result,
//! and everything rendered or read from it. Each workload has a folder here: its
//! section of the result as data (its `mod.rs`), the lines it adds to the report, the
//! figures it adds to compare and the HTML page, and the importer of its tool's
//! output. Two levels, so that no module reaches back into one that reaches it:
//!
//! - this module is data only: a [`crate::RunResult`] holds one
//!   [`WorkloadResult`], which a results file stores under its workload's key in
//!   `run` (`run.tpcc`, `run.sysbench`: `section`), and a summary holds the
//!   figures a workload adds to it ([`SummaryFigures`], flattened into `summary`);
//!   Its part answers for itself as data ([`WorkloadResult::part`], a
//!   [`WorkloadPart`]: its key, what was lost, its summary's figures), and adds
//!   another worker's of the same workload ([`WorkloadResult::merge`]);
//! - [`registry`] is what the generic code (the report, `show`, compare, a sweep, the
//!   HTML page, import) calls: every workload's [`kind::WorkloadKind`] in one list,
//!   and a part's report ([`registry::report_of`], a [`kind::PartReport`]).
//!
//! Adding a workload's results is a folder here, its variant of [`WorkloadResult`]
//! (its arms in `part`, `merge`, `section` and `registry::report_of`), its
//! `WorkloadPart`, `PartReport` and `WorkloadKind` in its `kind.rs`, and its line in
//! [`registry::KINDS`].

pub mod kind;
pub mod registry;
pub mod sysbench;
pub mod tpcc;

use serde::{Deserialize, Serialize};

/// A workload's own part of a run's result.
#[derive(Debug, Clone, PartialEq)]
pub enum WorkloadResult {
    /// HammerDB's TPC-C: the new orders committed, the server's counts, the time
    /// profile's names.
    Tpcc(tpcc::TpccResult),
    /// sysbench's OLTP tests: queries by kind, its percentile, its tables.
    Sysbench(sysbench::SysbenchSummary),
}

impl WorkloadResult {
    /// Its part, which answers for itself: the one place the variants are told
    /// apart, but for the pairs [`WorkloadResult::merge`] adds and the section's keys.
    pub fn part(&self) -> &dyn WorkloadPart {
        match self {
            WorkloadResult::Tpcc(t) => t,
            WorkloadResult::Sysbench(s) => s,
        }
    }

    /// The key of its section in a results file's `run`.
    pub fn key(&self) -> &'static str {
        self.part().key()
    }

    /// Another worker's part added (`pgbench-report merge`): each workload adds its
    /// counts. A part of another workload, which the merge's checks refuse before,
    /// cannot be added: why, and this part is left as it was.
    pub fn merge(&mut self, other: &WorkloadResult) -> Result<(), &'static str> {
        match (self, other) {
            (WorkloadResult::Tpcc(mine), WorkloadResult::Tpcc(theirs)) => mine.merge(theirs),
            (WorkloadResult::Sysbench(mine), WorkloadResult::Sysbench(theirs)) => {
                mine.merge(theirs)
            }
            _ => return Err("the workers ran different workloads"),
        }
        Ok(())
    }

    /// Why a figure the workload's result needs could not be read
    /// ([`WorkloadPart::lost`]).
    pub fn lost(&self) -> Option<&str> {
        self.part().lost()
    }

    /// The figures it adds to the run's summary, over a measured part of
    /// `measured_us`.
    pub fn summary(&self, measured_us: f64) -> SummaryFigures {
        self.part().summary(measured_us)
    }
}

/// What a workload's part of a run's result answers of itself, as data
/// ([`WorkloadResult::part`]; each workload implements it in its `kind.rs`). How it
/// is reported is `kind::PartReport`, a level up, which may read the run.
pub trait WorkloadPart {
    /// The key of its section in a results file's `run`.
    fn key(&self) -> &'static str;
    /// Why a figure the workload's result needs could not be read (TPC-C's server
    /// counts): the run then has no result of its own and does not end as a success.
    fn lost(&self) -> Option<&str>;
    /// The figures it adds to the run's summary, over a measured part of
    /// `measured_us`.
    fn summary(&self, measured_us: f64) -> SummaryFigures;
}

/// The figures workloads add to a results file's `summary`, each workload's under
/// its own names, beside pgbench's (absent for other runs).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct SummaryFigures {
    /// `nopm` and `tpm`.
    #[serde(flatten)]
    pub tpcc: tpcc::SummaryFigures,
}

/// [`crate::RunResult::workload`] in a results file: its
/// section under its workload's key, beside the run's other fields
/// (`#[serde(flatten, with = "section")]`). A section of `null` is none, as an
/// absent one; keys of no workload are left to the run's reader, which ignores them.
pub(crate) mod section {
    use super::{sysbench, tpcc, WorkloadResult};
    use serde::de::{IgnoredAny, MapAccess, Visitor};
    use serde::ser::SerializeMap;
    use serde::{Deserializer, Serializer};
    use std::fmt;

    pub fn serialize<S: Serializer>(w: &Option<WorkloadResult>, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match w {
            Some(WorkloadResult::Tpcc(t)) => map.serialize_entry(tpcc::KEY, t)?,
            Some(WorkloadResult::Sysbench(x)) => map.serialize_entry(sysbench::KEY, x)?,
            None => {}
        }
        map.end()
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<WorkloadResult>, D::Error> {
        d.deserialize_map(Section)
    }

    struct Section;

    impl<'de> Visitor<'de> for Section {
        type Value = Option<WorkloadResult>;

        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a run's fields")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut found = None;
            while let Some(key) = map.next_key::<String>()? {
                let read = match key.as_str() {
                    tpcc::KEY => map.next_value::<Option<_>>()?.map(WorkloadResult::Tpcc),
                    sysbench::KEY => map.next_value::<Option<_>>()?.map(WorkloadResult::Sysbench),
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                        None
                    }
                };
                found = found.or(read);
            }
            Ok(found)
        }
    }
}

#[cfg(test)]
mod tests;
