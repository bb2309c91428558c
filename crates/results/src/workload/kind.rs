//! What every workload's results offer the generic code: its part of a run's result
//! as a [`PartReport`] (the report's lines), a [`WorkloadKind`] (`show`'s lines, compare's and a sweep's figures) and, for a
//! workload whose tool's output can be imported, an [`Importer`]. Each workload implements them in its
//! folder's `kind.rs`; [`super::registry`] lists them.

use crate::compare::spec::FigureSpec;
use crate::import::error::ImportError;
use crate::import::report_text::Banner;
use crate::run::RunResult;
use crate::summary::Summary;
use std::collections::BTreeMap;

/// How a workload's part of a run's result is reported ([`super::registry::report_of`]):
/// each workload's part answers for its own lines. What the data itself answers (its
/// key, what was lost, its summary's figures) is [`super::WorkloadPart`].
pub trait PartReport {
    /// The lines the report prints in place of pgbench's `scaling factor: N` for
    /// `r`, whose part it is (`None`: pgbench's line).
    fn scale_lines(&self, r: &RunResult) -> Option<String>;
    /// What the report prints after pgbench's report and its percentiles.
    fn render(&self, r: &RunResult, out: &mut String);
}

/// One workload's results as a whole: what it adds to summaries, compare, sweeps and
/// `show`, and the reader of its tool's output.
pub trait WorkloadKind: Sync {
    /// What `show` prints of a summary's own figures after its tps line (an imported
    /// run's, which has no result to render).
    fn summary_lines(&self, s: &Summary, out: &mut String);
    /// The figures it adds to summaries, as compare's rows (leading the table when
    /// the first run has the first of them) and the HTML page's columns.
    fn figures(&self) -> &'static [FigureSpec];
    /// The figures a sweep or a search shows of its steps beyond pgbench's (each with
    /// its [`FigureSpec::sweep`]): some of [`WorkloadKind::figures`], or one a sweep
    /// reads from the step's run rather than its summary.
    fn sweep_figures(&self) -> &'static [&'static FigureSpec];
    /// The reader of its tool's output for `pgbench-report import`, if any.
    fn importer(&self) -> Option<&'static dyn Importer>;
}

/// Reads a workload's tool's output (its report on stdout) for `pgbench-report
/// import`, beside stock pgbench's reader.
pub trait Importer: Sync {
    /// The tool whose output it reads.
    fn tool(&self) -> &'static Tool;
    /// Whether `text` is the tool's output rather than a pgbench report (told by its
    /// content).
    fn recognises(&self, text: &str) -> bool;
    /// Whether an imported summary came from it: by the transaction type its import
    /// gave (`transaction_type`), or else by its client's banner (`client`).
    fn made(&self, transaction_type: &str, client: &str) -> bool;
    /// Whether it takes `--test`: the test the output is of, which the tool does not
    /// print.
    fn takes_test(&self) -> bool;
    /// Reads `text` (the file `file`); `test` is `--test`'s name, if given.
    fn import(&self, file: &str, text: &str, test: Option<&str>) -> Result<Imported, ImportError>;
}

/// A tool whose output can be imported, as `show` names it.
#[derive(Debug, PartialEq, Eq)]
pub struct Tool {
    /// `imported from NAME output`.
    pub name: &'static str,
    /// The title of the percentiles it printed.
    pub percentiles_title: &'static str,
}

/// What an import read of a tool's report.
#[derive(Debug, Default, PartialEq)]
pub struct Imported {
    pub summary: Summary,
    pub banner: Banner,
    /// The run's settings under pgbench-rs's option names, as far as the output
    /// tells them.
    pub options: BTreeMap<String, serde_json::Value>,
}
