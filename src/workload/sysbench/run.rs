//! What a sysbench run adds to its result: sysbench's summary figures (its queries by
//! kind, from what this process's clients counted of their statements; its
//! `--percentile`; its tables and their size), as an observer of the run
//! ([`crate::bench::observer`]).

use super::Config;
use crate::bench::error::RunError;
use crate::bench::observer::{BeforeRun, Notice, RunEnd, RunObserver, Scope};
use crate::bench::phases::Phases;
use pgbench_results::workload::sysbench::{QueryCounts, SysbenchSummary};
use pgbench_results::workload::WorkloadResult;
use pgbench_results::RunResult;

/// The summary's figures the options give; the queries come at the end.
pub struct Summary {
    percentile: u32,
    tables: u32,
    table_size: u32,
}

impl Summary {
    pub fn new(config: &Config) -> Summary {
        Summary {
            percentile: config.percentile,
            tables: config.tables,
            table_size: config.table_size,
        }
    }
}

impl RunObserver for Summary {
    fn scope(&self) -> Scope {
        Scope::ThisProcess
    }

    fn before(&mut self, _: &BeforeRun) -> Result<(), RunError> {
        Ok(())
    }

    fn measure_from(&mut self, _: &Phases) {}

    /// sysbench's `pgsql` driver counts its queries as the clients counted their
    /// statements, and its reconnects as `--reconnect`'s (sysbench itself never
    /// reconnects, so without the option they are 0).
    fn finish(self: Box<Self>, end: &RunEnd, result: &mut RunResult) -> Vec<Notice> {
        let kinds = &end.statements;
        result.workload = Some(WorkloadResult::Sysbench(SysbenchSummary {
            percentile: self.percentile,
            queries: QueryCounts {
                read: kinds.read,
                write: kinds.write,
                other: kinds.other,
                errors: kinds.errors,
                reconnects: result.availability.as_ref().map_or(0, |a| a.reconnects),
            },
            tables: Some(self.tables),
            table_size: Some(self.table_size),
        }));
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::control::RunControl;
    use crate::bench::events::StatementKinds;

    #[test]
    fn the_summary_counts_the_clients_statements_as_sysbench_its_queries() {
        let config = Config::new(super::super::Test::ReadOnly, &[]).unwrap();
        let control = RunControl::new(1);
        let end = RunEnd {
            control: &control,
            phases: Phases {
                start_us: 0,
                measure_from_us: 0,
            },
            end_us: 10_000_000,
            threads_waited_ns: None,
            statements: StatementKinds {
                read: 140,
                write: 0,
                other: 20,
                errors: 3,
            },
        };
        let mut result = pgbench_results::synthetic::run(&pgbench_results::synthetic::Spec::tpcb(
            1, 10, 10.0, 1000.0,
        ));
        let notices = Box::new(Summary::new(&config)).finish(&end, &mut result);
        assert!(notices.is_empty());
        assert_eq!(
            result.workload,
            Some(WorkloadResult::Sysbench(SysbenchSummary {
                percentile: 95,
                queries: QueryCounts {
                    read: 140,
                    write: 0,
                    other: 20,
                    errors: 3,
                    reconnects: 0,
                },
                tables: Some(1),
                table_size: Some(10_000),
            }))
        );
    }
}
