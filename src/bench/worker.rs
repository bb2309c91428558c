//! A process's share of a `--worker=I/N` run: which run it belongs to (the run id), its
//! slice of the whole run's random states, and its start with the other workers
//! (through [`super::barrier`]). Without `--worker` everything here is the identity:
//! the plan's seed, pgbench's states, the run's own start.
//!
//! The seed rule: a seed given as a number (`--random-seed=N`, `PGBENCH_RANDOM_SEED=N`)
//! is part of the run id, so workers with different seeds never meet; any other seed
//! (the clock, `time`, `rand`) would differ from worker to worker, so every worker takes
//! worker 0's, which it reads at the barrier before deriving its random states.

use super::barrier::Barrier;
use super::control::{RunControl, StopCause};
use super::error::RunError;
use super::launch::{Start, StartGate};
use super::plan::BenchPlan;
use crate::clock::now_us;
use crate::logging::Output;
use pgbench_results::document::WorkerInfo;
use pgbench_script::prng::SeedPlan;
use pgbench_wire::ConnectOptions;
use std::sync::Arc;

/// The run id: 16 hexadecimal digits of SHA-256 over the program's version, N and the
/// whole plan but what each worker may choose for itself (its index and timeout, where
/// its files go, its metrics endpoint, `-d`) and an unnumbered seed. Workers of runs that differ in any
/// option, script, variable or numbered seed get different ids and never meet.
pub fn run_id(plan: &BenchPlan) -> String {
    let mut shared = plan.clone();
    // What a worker keeps follows from its own results files.
    shared.keep = Default::default();
    shared.metrics = None;
    shared.debug = false;
    if let Some(log) = shared.log.as_mut() {
        log.prefix.clear();
    }
    if let Some(w) = shared.worker.as_mut() {
        w.index = 0;
        w.timeout_s = 0;
        if !w.seed_given {
            shared.random_seed = 0;
        }
    }
    // Debug prints every field, so an option added later is part of the id unless
    // cleared above.
    let text = format!("pgbench-rs {} {shared:?}", env!("CARGO_PKG_VERSION"));
    let digest = openssl::sha::sha256(text.as_bytes());
    digest[..8].iter().map(|b| format!("{b:02x}")).collect()
}

/// Every random state of `clients` clients and `threads` threads of worker `index` of
/// `count`: pgbench's for the whole run (`count * clients` clients, `count * threads`
/// threads, all derived from `seed` in pgbench's order), then this worker's slice.
/// `:default_seed` and `:random_seed` are the whole run's.
pub fn seed_slice(
    seed: u64,
    (index, count): (usize, usize),
    clients: usize,
    threads: usize,
    default_seed_defined: bool,
) -> SeedPlan {
    let mut all = SeedPlan::new(seed, count * clients, count * threads, default_seed_defined);
    let (c, t) = (index * clients, index * threads);
    all.clients.truncate(c + clients);
    all.clients.drain(..c);
    all.threads.truncate(t + threads);
    all.threads.drain(..t);
    all
}

/// This process's random states from the run's seed.
pub fn seed_plan(plan: &BenchPlan, seed: u64) -> SeedPlan {
    let place = plan
        .worker
        .as_ref()
        .map_or((0, 1), |w| (w.index as usize, w.count as usize));
    let s = &plan.settings;
    seed_slice(
        seed,
        place,
        s.clients,
        s.threads,
        plan.defines_variable("default_seed"),
    )
}

/// A worker joined to the others, waiting for its clients to connect.
pub struct Joined {
    barrier: Barrier,
    run_id: String,
}

impl Joined {
    /// The run's seed: this worker's, or worker 0's (see the module's seed rule).
    pub fn seed(&self) -> u64 {
        self.barrier.seed
    }
}

/// `--worker`: joins the run's barrier right after setup, before any random state
/// is derived. `None` without `--worker`.
pub fn join(
    plan: &BenchPlan,
    opts: &ConnectOptions,
    out: &Arc<dyn Output>,
) -> Result<Option<Joined>, RunError> {
    let Some(worker) = &plan.worker else {
        return Ok(None);
    };
    let run_id = run_id(plan);
    let barrier = Barrier::join(
        opts,
        (&run_id, &worker.option_digests),
        worker,
        plan.random_seed,
        Arc::clone(out),
    )?;
    Ok(Some(Joined { barrier, run_id }))
}

/// The instants a run counts from, µs on the run clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Starts {
    /// `-T`'s deadline and `-P`'s intervals: the agreed instant under `--worker`.
    pub clock_us: i64,
    /// "initial connection time" counts from here: this worker's own connection time
    /// stays what it was, without the wait for the others.
    pub timing_us: i64,
    /// This worker's place in the run, for the results file.
    pub worker: Option<WorkerInfo>,
}

/// This process's clients are connected (`start`: when they began to): under
/// `--worker`, waits for the others and sleeps until the agreed instant; a failure
/// sends the waiting clients home.
pub fn start_together(
    joined: Option<Joined>,
    plan: &BenchPlan,
    (control, gate): (&RunControl, &StartGate),
    start: i64,
    out: &dyn Output,
) -> Result<Starts, RunError> {
    let (Some(joined), Some(w)) = (joined, &plan.worker) else {
        return Ok(Starts {
            clock_us: start,
            timing_us: start,
            worker: None,
        });
    };
    let connected = now_us();
    let agreed = joined
        .barrier
        .start(&|| match control.cause() {
            Some(StopCause::Signal(sig)) => Some(sig),
            _ => None,
        })
        .inspect_err(|_| gate.open(Start::Stop))?;
    let late_us = now_us() - agreed.local_us;
    if late_us > 50_000 {
        out.warning(&format!(
            "worker {} started {:.1} ms after the agreed instant",
            w.index,
            late_us as f64 / 1000.0
        ));
    }
    Ok(Starts {
        clock_us: agreed.local_us,
        timing_us: agreed.local_us - (connected - start),
        worker: Some(WorkerInfo {
            index: w.index,
            count: w.count,
            run_id: joined.run_id,
            start_unix_us: agreed.server_unix_us,
            first_client: plan.first_client() as u32,
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    use proptest::prelude::*;

    /// The first draws of a generator, to compare states by what they produce.
    fn draws(rng: &pgbench_script::prng::Prng) -> [u64; 3] {
        let mut r = rng.clone();
        [r.next_u64(), r.next_u64(), r.next_u64()]
    }

    proptest! {
        /// With -c equal to -j, N workers together hold exactly the clients' and the
        /// threads' states of one run with all the clients, in order; and with -j
        /// dividing -c, each worker's threads are the run's threads of its clients.
        #[test]
        fn workers_together_hold_the_states_of_one_run(
            seed in any::<u64>(),
            count in 1usize..6,
            clients in 1usize..6,
            threads_divisor in 1usize..4,
            defined in any::<bool>(),
        ) {
            let threads = if clients % threads_divisor == 0 { clients / threads_divisor } else { clients };
            let one = SeedPlan::new(seed, count * clients, count * threads, defined);
            let mut clients_of_all = Vec::new();
            let mut threads_of_all = Vec::new();
            for index in 0..count {
                let part = seed_slice(seed, (index, count), clients, threads, defined);
                prop_assert_eq!(part.clients.len(), clients);
                prop_assert_eq!(part.threads.len(), threads);
                prop_assert_eq!(part.default_seed, one.default_seed);
                prop_assert_eq!(part.random_seed, one.random_seed);
                clients_of_all.extend(part.clients.iter().map(draws));
                threads_of_all.extend(part.threads.iter().map(|t| (draws(&t.choose), draws(&t.throttle), draws(&t.sample))));
            }
            let want: Vec<_> = one.clients.iter().map(draws).collect();
            prop_assert_eq!(clients_of_all, want);
            let want: Vec<_> = one.threads.iter().map(|t| (draws(&t.choose), draws(&t.throttle), draws(&t.sample))).collect();
            prop_assert_eq!(threads_of_all, want);
        }
    }

    #[test]
    fn one_worker_of_one_is_pgbench_itself() {
        assert_eq!(
            seed_slice(42, (0, 1), 3, 2, false),
            SeedPlan::new(42, 3, 2, false)
        );
        // A worker's first client is not the run's first.
        let second = seed_slice(42, (1, 2), 3, 3, false);
        assert_eq!(second.clients[0], SeedPlan::new(42, 6, 6, false).clients[3]);
    }
}
