//! sysbench 1.0's OLTP tests as it runs them on PostgreSQL (its `oltp_common.lua`,
//! the test scripts in `/usr/share/sysbench/`, `sb_rand.c` and the `pgsql` driver):
//! the test names, their options under sysbench's names with sysbench's defaults
//! (given as `-D NAME=VALUE`), the generated event script ([`script`]), the
//! `prepare` step ([`prepare`]), `--check` of its tables ([`check`]) and its summary's
//! figures, from what a run's clients counted ([`run`]).

pub mod check;
pub mod prepare;
pub mod run;
pub mod script;

use super::api::{
    RunPolicy, RunWorkload, ScriptContext, Workload, WorkloadError, WorkloadFamily, WorkloadScript,
};
use super::prepare::{PrepareError, PrepareOptions};
use crate::bench::observer::RunObserver;
use pgbench_results::QueryMode;
use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};
use std::sync::Arc;

/// sysbench's OLTP tests in the registry.
pub struct Family;

pub static FAMILY: Family = Family;

impl WorkloadFamily for Family {
    fn names(&self) -> Vec<&'static str> {
        TESTS.iter().map(|t| t.name()).collect()
    }

    fn help(&self) -> &'static str {
        "sysbench's oltp_* tests"
    }

    fn configure(
        &self,
        name: &'static str,
        defines: &[(String, String)],
    ) -> Result<Arc<dyn Workload>, WorkloadError> {
        let test = TESTS.iter().find(|t| t.name() == name).copied();
        let test = test.ok_or_else(|| WorkloadError::Unknown {
            name: name.to_string(),
            known: self.names().join(", "),
        })?;
        Ok(Arc::new(Config::new(test, defines)?))
    }

    /// sysbench's `--tables=N`, which getopt reads as `--tablespace=N`.
    fn option_hint(&self, option: &str, value: &str) -> Option<String> {
        (option == "tables").then(|| {
            format!(
                "sysbench's --tables={value} is -D tables={value} here (its options are -D NAME=VALUE)"
            )
        })
    }
}

/// One of sysbench's OLTP tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Test {
    ReadWrite,
    ReadOnly,
    WriteOnly,
    PointSelect,
    Insert,
    Delete,
    UpdateIndex,
    UpdateNonIndex,
    RandomPoints,
    RandomRanges,
}

/// The tests, in the order of sysbench's documentation.
pub const TESTS: &[Test] = &[
    Test::ReadWrite,
    Test::ReadOnly,
    Test::WriteOnly,
    Test::PointSelect,
    Test::Insert,
    Test::Delete,
    Test::UpdateIndex,
    Test::UpdateNonIndex,
    Test::RandomPoints,
    Test::RandomRanges,
];

impl Test {
    /// sysbench's name of the test (its Lua file's).
    pub fn name(self) -> &'static str {
        match self {
            Test::ReadWrite => "oltp_read_write",
            Test::ReadOnly => "oltp_read_only",
            Test::WriteOnly => "oltp_write_only",
            Test::PointSelect => "oltp_point_select",
            Test::Insert => "oltp_insert",
            Test::Delete => "oltp_delete",
            Test::UpdateIndex => "oltp_update_index",
            Test::UpdateNonIndex => "oltp_update_non_index",
            Test::RandomPoints => "select_random_points",
            Test::RandomRanges => "select_random_ranges",
        }
    }

    /// The options of this test beyond `oltp_common.lua`'s (name, default).
    fn own_options(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Test::RandomPoints => &[("random_points", "10")],
            Test::RandomRanges => &[("number_of_ranges", "10"), ("delta", "5")],
            _ => &[],
        }
    }
}

/// `oltp_common.lua`'s options and sysbench's `--rand-*` options, with their defaults.
const COMMON_OPTIONS: &[(&str, &str)] = &[
    ("table_size", "10000"),
    ("range_size", "100"),
    ("tables", "1"),
    ("point_selects", "10"),
    ("simple_ranges", "1"),
    ("sum_ranges", "1"),
    ("order_ranges", "1"),
    ("distinct_ranges", "1"),
    ("index_updates", "1"),
    ("non_index_updates", "1"),
    ("delete_inserts", "1"),
    ("range_selects", "on"),
    ("auto_inc", "on"),
    ("skip_trx", "off"),
    ("secondary", "off"),
    ("create_secondary", "on"),
    ("mysql_storage_engine", "innodb"),
    ("pgsql_variant", ""),
    ("rand_type", "special"),
    ("rand_spec_iter", "12"),
    ("rand_spec_pct", "1"),
    ("rand_spec_res", "75"),
    ("rand_pareto_h", "0.2"),
    ("percentile", "95"),
];

/// sysbench's `--rand-type`: the distribution of `sysbench.rand.default`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RandType {
    Uniform,
    Gaussian,
    Special,
    Pareto,
}

/// A test with its options resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    pub test: Test,
    pub tables: u32,
    pub table_size: u32,
    pub range_size: u32,
    pub point_selects: u32,
    pub simple_ranges: u32,
    pub sum_ranges: u32,
    pub order_ranges: u32,
    pub distinct_ranges: u32,
    pub index_updates: u32,
    pub non_index_updates: u32,
    pub delete_inserts: u32,
    pub range_selects: bool,
    pub auto_inc: bool,
    pub skip_trx: bool,
    pub create_secondary: bool,
    pub rand_type: RandType,
    pub rand_spec_iter: u32,
    pub rand_spec_pct: u32,
    pub rand_spec_res: u32,
    pub rand_pareto_h: f64,
    pub random_points: u32,
    pub number_of_ranges: u32,
    pub delta: u32,
    /// sysbench's `--percentile` for its latency summary (0: disabled).
    pub percentile: u32,
}

impl Config {
    /// sysbench's defaults with the `-D` options applied; an option the test does not
    /// have is refused with the list of those it has.
    pub fn new(test: Test, defines: &[(String, String)]) -> Result<Config, WorkloadError> {
        let options = Options::new(test, defines)?;
        options.refuse_mysql_and_redshift()?;
        let int = |name: &str| options.int(name);
        let flag = |name: &str| options.flag(name);
        let config = Config {
            test,
            tables: int("tables")?,
            table_size: int("table_size")?,
            range_size: int("range_size")?,
            point_selects: int("point_selects")?,
            simple_ranges: int("simple_ranges")?,
            sum_ranges: int("sum_ranges")?,
            order_ranges: int("order_ranges")?,
            distinct_ranges: int("distinct_ranges")?,
            index_updates: int("index_updates")?,
            non_index_updates: int("non_index_updates")?,
            delete_inserts: int("delete_inserts")?,
            range_selects: flag("range_selects")?,
            auto_inc: flag("auto_inc")?,
            skip_trx: flag("skip_trx")?,
            create_secondary: flag("create_secondary")?,
            rand_type: options.rand_type()?,
            rand_spec_iter: int("rand_spec_iter")?,
            rand_spec_pct: int("rand_spec_pct")?,
            rand_spec_res: int("rand_spec_res")?,
            rand_pareto_h: options.pareto_h()?,
            random_points: int("random_points")?,
            number_of_ranges: int("number_of_ranges")?,
            delta: int("delta")?,
            percentile: int("percentile")?,
        };
        config.check(|message| unsupported(test, message))
    }

    /// sysbench's own refusals (its asserts and what its generators need).
    fn check(self, unsupported: impl Fn(&str) -> WorkloadError) -> Result<Config, WorkloadError> {
        if self.tables == 0 {
            return Err(unsupported("tables must be at least 1"));
        }
        if matches!(self.test, Test::RandomPoints | Test::RandomRanges) && self.tables != 1 {
            return Err(unsupported("this benchmark does not support --tables > 1"));
        }
        if self.percentile > 100 {
            return Err(unsupported("percentile must be within 0..100"));
        }
        if self.rand_spec_iter == 0 {
            return Err(unsupported("rand_spec_iter must be at least 1"));
        }
        if self.rand_spec_pct > 100 || self.rand_spec_res >= 100 {
            return Err(unsupported(
                "rand_spec_pct must be within 0..100 and rand_spec_res within 0..99",
            ));
        }
        if self.test == Test::RandomPoints && self.random_points == 0
            || self.test == Test::RandomRanges && self.number_of_ranges == 0
        {
            return Err(unsupported("a SELECT needs at least one point or range"));
        }
        Ok(self)
    }

    /// The table size prepare fills: `oltp_insert` without `auto_inc` starts empty
    /// (its client-made ids would collide with prepared ones).
    pub fn prepared_rows(&self) -> u32 {
        if self.test == Test::Insert && !self.auto_inc {
            0
        } else {
            self.table_size
        }
    }

    /// Whether its transactions draw ids of the prepared rows (`1..=table_size`): every
    /// test but `oltp_insert`, which only adds rows.
    pub fn draws_prepared_rows(&self) -> bool {
        self.test != Test::Insert && self.prepared_rows() > 0
    }

    /// Client variables the script keeps between transactions.
    pub fn variables(&self) -> Vec<(String, String)> {
        if self.test == Test::Insert && !self.auto_inc {
            vec![(script::INSERT_SEQUENCE.to_string(), "0".to_string())]
        } else {
            Vec::new()
        }
    }
}

impl RunWorkload for Config {
    fn name(&self) -> &'static str {
        self.test.name()
    }

    fn observers(&self) -> Vec<Box<dyn RunObserver>> {
        vec![Box::new(run::Summary::new(self))]
    }

    fn check_tables(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(), String> {
        prepare::check_tables(self, conn, target)?;
        check::table_sizes(self, conn, target)
    }

    fn table_scale(&self, _: &mut Connection) -> Option<i32> {
        None
    }

    fn unused_tables(&self, conn: &mut Connection) -> Vec<String> {
        check::unused_tables(self, conn)
    }
}

impl Workload for Config {
    /// sysbench's `--db-ps-mode=auto` (its default) prepares each statement once per
    /// connection. sysbench rolls back and ignores the errors concurrency brings (a
    /// duplicate key after a concurrent delete and insert, deadlocks): they are
    /// failures, not aborts. Its summary has a percentile; it vacuums nothing before a
    /// run.
    fn policy(&self) -> RunPolicy {
        RunPolicy {
            query_mode: Some(QueryMode::Prepared),
            continue_on_error: true,
            keep_histograms: true,
            skip_vacuum: true,
        }
    }

    /// The test's one script.
    fn scripts(&self, ctx: ScriptContext) -> Vec<WorkloadScript> {
        vec![WorkloadScript {
            name: self.name().to_string(),
            description: format!("<workload: {}>", self.name()),
            text: script::generate(self, ctx),
            weight: 1,
            untimed_sleeps: false,
            // sysbench's thread_init prepares every table's statements before
            // "Threads started!" (oltp_common.lua `prepare_statements`): none is
            // prepared inside a measured transaction.
            prepare_on_connect: true,
        }]
    }

    fn script_text(&self, ctx: ScriptContext) -> String {
        script::generate(self, ctx)
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
        prepare::run(self, main, options, how)
    }

    fn incomplete_note(&self) -> String {
        format!(
            "the {} prepare did not complete: each table is there whole or not at all, \
             and a run refuses missing ones",
            self.name()
        )
    }

    fn check(&self, conn: &mut Connection, target: &ConnectArgs) -> Result<(String, bool), String> {
        check::check(self, conn, target)
    }
}

/// The `-D` options given for a test, read with sysbench's defaults and its rules.
struct Options<'a> {
    test: Test,
    defines: &'a [(String, String)],
    /// The test's options with their defaults.
    known: Vec<(&'static str, &'static str)>,
}

impl<'a> Options<'a> {
    /// Refuses an option the test does not have, naming those it has.
    fn new(test: Test, defines: &'a [(String, String)]) -> Result<Options<'a>, WorkloadError> {
        let known: Vec<(&str, &str)> = COMMON_OPTIONS
            .iter()
            .chain(test.own_options())
            .copied()
            .collect();
        if let Some((name, _)) = defines
            .iter()
            .find(|(name, _)| !known.iter().any(|(k, _)| k == name))
        {
            return Err(WorkloadError::UnknownOption {
                workload: test.name(),
                name: name.clone(),
                known: known.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", "),
            });
        }
        Ok(Options {
            test,
            defines,
            known,
        })
    }

    /// The last `-D` value of `name`, else its default.
    fn get(&self, name: &str) -> &str {
        self.defines
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
            .or_else(|| self.known.iter().find(|(k, _)| *k == name).map(|(_, d)| *d))
            .unwrap_or("0")
    }

    fn bad(&self, name: &str, why: &str) -> WorkloadError {
        WorkloadError::InvalidValue {
            workload: self.test.name(),
            name: name.to_string(),
            value: self.get(name).to_string(),
            why: why.to_string(),
        }
    }

    fn int(&self, name: &str) -> Result<u32, WorkloadError> {
        self.get(name)
            .trim()
            .parse::<u32>()
            .map_err(|_| self.bad(name, "not a number from 0 to 4294967295"))
    }

    fn flag(&self, name: &str) -> Result<bool, WorkloadError> {
        match self.get(name).to_ascii_lowercase().as_str() {
            "on" | "true" | "yes" | "1" => Ok(true),
            "off" | "false" | "no" | "0" => Ok(false),
            _ => Err(self.bad(name, "expected on or off")),
        }
    }

    fn rand_type(&self) -> Result<RandType, WorkloadError> {
        match self.get("rand_type") {
            "uniform" => Ok(RandType::Uniform),
            "gaussian" => Ok(RandType::Gaussian),
            "special" => Ok(RandType::Special),
            "pareto" => Ok(RandType::Pareto),
            _ => Err(self.bad("rand_type", "expected uniform, gaussian, special or pareto")),
        }
    }

    /// `rand_pareto_h`, read as C's `atof` reads it, inside `(0, 1)`.
    fn pareto_h(&self) -> Result<f64, WorkloadError> {
        let h = pgbench_script::cnum::atof(self.get("rand_pareto_h"));
        if h > 0.0 && h < 1.0 {
            Ok(h)
        } else {
            Err(self.bad("rand_pareto_h", "expected a number between 0 and 1"))
        }
    }

    /// What sysbench accepts for MySQL and Redshift only.
    fn refuse_mysql_and_redshift(&self) -> Result<(), WorkloadError> {
        if self.flag("secondary")? {
            return Err(unsupported(
                self.test,
                "secondary=on is MySQL's (sysbench's KEY xid syntax is refused by PostgreSQL)",
            ));
        }
        if !self.get("pgsql_variant").is_empty() {
            return Err(unsupported(
                self.test,
                "pgsql_variant (redshift) is not supported: PostgreSQL itself is the target",
            ));
        }
        Ok(())
    }
}

fn unsupported(test: Test, message: &str) -> WorkloadError {
    WorkloadError::Unsupported {
        workload: test.name(),
        message: message.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn defines(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn sysbench_defaults() {
        let c = Config::new(Test::ReadWrite, &[]).unwrap();
        assert_eq!((c.tables, c.table_size, c.point_selects), (1, 10_000, 10));
        assert_eq!(c.rand_type, RandType::Special);
        assert!(c.range_selects && c.auto_inc && !c.skip_trx && c.create_secondary);
    }

    #[test]
    fn options_apply_last_one_wins() {
        let d = defines(&[("tables", "4"), ("tables", "8"), ("skip_trx", "on")]);
        let c = Config::new(Test::ReadOnly, &d).unwrap();
        assert_eq!(c.tables, 8);
        assert!(c.skip_trx);
    }

    #[test]
    fn unknown_option_names_the_known_ones() {
        let e = Config::new(Test::ReadWrite, &defines(&[("table", "4")])).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("unknown option \"table\" for workload oltp_read_write; its options: table_size, range_size, tables,"), "{text}");
        assert!(!text.contains("random_points"));
        let points = Config::new(Test::RandomPoints, &defines(&[("random_points", "3")]));
        assert_eq!(points.unwrap().random_points, 3);
    }

    #[test]
    fn bad_values_are_refused() {
        for (name, value) in [
            ("tables", "x"),
            ("tables", "0"),
            ("skip_trx", "maybe"),
            ("rand_type", "zipf"),
            ("rand_pareto_h", "1.5"),
            ("secondary", "on"),
        ] {
            assert!(
                Config::new(Test::ReadWrite, &defines(&[(name, value)])).is_err(),
                "{name}={value}"
            );
        }
        let multi = Config::new(Test::RandomRanges, &defines(&[("tables", "2")]));
        assert!(multi.unwrap_err().to_string().contains("--tables > 1"));
    }
}
