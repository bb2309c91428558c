//! Sweeps and capacity searches: many runs of one plan in one process, each a step
//! that changes one thing.
//!
//! - `--sweep=NAME=V1,V2,...` runs the plan at each value of `-c` (`clients`; `-j` as
//!   given, or `-c` when fewer), `-R` (`rate`) or a script variable (`-D NAME`),
//!   `--repeat` times in rounds;
//! - `--find-max-rate=TARGET` runs it without `-R`, then at rates from a ladder and a
//!   bisection ([`search`]) to the highest rate whose measured part meets the target
//!   ([`target`]).
//!
//! ```text
//! cli: options ─► Action::Sweep { base: BenchPlan, capacity: plan::CapacityPlan }
//!      ─► runner::run
//! runner: a crate::session::Session (metrics endpoint, signals: SweepStop, a
//!     throwaway server if asked);
//!     ─ for each step: its plan (step::step_plan), bench::run with an
//!       Output of its own and a RunStop of its own, its line (pgbench_results::capacity
//!       ::table) on stdout, what comes next on stderr (progress)
//!     ─ report: the closing lines, the representative step's report, the results
//!       file with every step (export; written by crate::session::finish)
//! ```
//!
//! Every step is a whole run: its own connections, `--warmup`, `-T` or `-t`, vacuum,
//! results. Nothing here changes what a run does; a plan without these options never
//! comes here.

// No re-exports here: each user names the file it needs (`capacity::plan::What`),
// so that what the command line and the plan take of this module (its data and
// options) does not lead back through the runner to the command line.
mod export;
pub mod options;
pub mod plan;
pub mod progress;
pub mod runner;
pub mod search;
pub mod step;
mod stop;
pub mod target;
