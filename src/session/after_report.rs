//! What pgbench-rs prints after pgbench's report on request: the stages' block
//! (`--rate-stages`, `--client-stages`), the availability block
//! (`--reconnect`), the `server:` block (`--print-server-stats`) and the run's
//! validity warnings (`--print-warnings`).

use crate::bench::plan::BenchPlan;
use pgbench_results::RunResult;

/// The text after the report (empty unless asked for).
pub fn render(result: &RunResult, plan: &BenchPlan) -> String {
    let mut out = String::new();
    if let Some(stages) = &result.stages {
        out.push_str(&pgbench_results::stages::render_block(stages));
    }
    if let Some(a) = &result.availability {
        out.push_str(&pgbench_results::availability::render_block(a));
    }
    if plan.server_stats.is_some_and(|s| s.print) {
        match &result.server {
            Some(stats) => out.push_str(&pgbench_results::server::render_block(stats)),
            None => out.push_str("server: not recorded by this process\n"),
        }
    }
    if plan.print_warnings {
        let checks = pgbench_results::warnings::check(result);
        out.push_str(&pgbench_results::warnings::render(&checks.warnings));
        for n in &checks.not_checked {
            out.push_str(&format!("not checked: {}: {}\n", n.code, n.reason));
        }
    }
    out
}
