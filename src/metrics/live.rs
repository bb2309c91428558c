//! The run's state as the metrics endpoint shows it: the collector writes it (a lock
//! per batch of transactions, on the collector's thread, never on a client's), a
//! scrape copies it out as a [`Snapshot`] and renders that without the lock.
//!
//! The counters are pgbench's own (`StatsData` per script); the latency and schedule
//! lag histograms count in the buckets of the report's HDR histograms
//! ([`LatencyCounts`]), so a scrape's `_count` is the report's transaction count.

use pgbench_results::run::Limit;
use pgbench_results::{LatencyCounts, StatsData, TxOutcome, TxRecord};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard};

/// What the endpoint knows of the run before it starts.
#[derive(Debug, Clone)]
pub struct LivePlan {
    /// Each script's name as the report gives it (`<builtin: select only>`, a file).
    pub scripts: Vec<String>,
    pub weights: Vec<i64>,
    /// This process's clients.
    pub clients: usize,
    pub throttled: bool,
    pub latency_limit_us: Option<i64>,
    pub limit: Limit,
    /// The period of the `-P`-style averages: `-P`'s, or a second.
    pub interval_us: i64,
    /// `--reconnect`: its reconnections and clients out of service are served.
    pub reconnecting: bool,
}

/// Where the run is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Setting up and connecting the clients.
    Connecting,
    /// `--warmup`: the clients run, nothing is counted but the warm-up's own.
    Warmup,
    /// The clients run and every transaction counts.
    Measured,
    /// The last client is done: the values are the report's.
    Finished,
}

impl Phase {
    /// Every phase, in order, with the name its `phase` label takes.
    pub const ALL: [(Phase, &'static str); 4] = [
        (Phase::Connecting, "connecting"),
        (Phase::Warmup, "warmup"),
        (Phase::Measured, "measured"),
        (Phase::Finished, "finished"),
    ];
}

/// `--rate-stages`, `--client-stages`: where the stages are at an instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageNow {
    /// The stage in force, from 1, numbered as the report's stages block and the `-P`
    /// line number them (steps, stages of no time, are not counted).
    pub stage: usize,
    /// How many stages the block has.
    pub stages: usize,
    pub target: StageTarget,
}

/// What the stages' schedule asks for at an instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StageTarget {
    /// The `-R` schedule's rate, transactions per second.
    Rate(f64),
    /// The clients active.
    Clients(f64),
}

/// Where the stages are at an instant on the run clock. The runner hands it over
/// with the stage plan inside, so that this module needs nothing of the plan; a
/// scrape calls it, the clients and the collector never do.
pub type StageReader = Box<dyn Fn(i64) -> StageNow + Send + Sync>;

/// The upper bounds of the histograms' buckets, µs: 1-2-5 steps from 50 µs to a
/// minute, which `histogram_quantile` interpolates within a factor of 2.5 at worst.
pub const BUCKET_BOUNDS_US: [u64; 19] = [
    50, 100, 200, 500, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
    1_000_000, 2_000_000, 5_000_000, 10_000_000, 20_000_000, 60_000_000,
];

/// One script's counters and histograms.
struct ScriptState {
    stats: StatsData,
    /// Successful transactions above `-L`.
    late: u64,
    latency: LatencyCounts,
    /// Under `-R` only.
    lag: Option<LatencyCounts>,
    /// The counters at the start of the current `-P`-style interval.
    mark: StatsData,
    /// The last whole interval's averages, µs (none before the first ends, or when
    /// it had no successful transaction).
    average: Option<Averages>,
}

/// The `-P` line's figures of one interval, µs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Averages {
    pub latency_us: f64,
    pub lag_us: f64,
}

struct State {
    /// Connecting, Measured (from the start, warm-up included) or Finished.
    phase: Phase,
    /// When the client threads started, µs on the run clock (`-T` counts from it).
    start_us: Option<i64>,
    /// `--warmup`: when the measured part begins (`-T` then counts from it).
    measure_from_us: Option<i64>,
    /// `--warmup`: what the warm-up counted (the collector's figures).
    warmup: Option<StatsData>,
    running: usize,
    aborted: usize,
    next_mark_us: i64,
    scripts: Vec<ScriptState>,
    /// `--reconnect`: connections made again, and clients out of service now.
    outages: Option<Outages>,
    /// `--rate-stages`, `--client-stages`, once the run has placed them on its clock.
    stages: Option<StageReader>,
    /// When the run finished, µs on the run clock: the stages are read at that
    /// instant from then on, so that the linger shows where the run ended.
    finished_us: Option<i64>,
}

/// The live state, shared by the collector and the endpoint.
pub struct Live {
    plan: LivePlan,
    /// Clients with their connection made, before the run (the client threads count
    /// them as they connect; the collector takes over when the run starts).
    connected: AtomicUsize,
    state: Mutex<State>,
}

/// One script's figures at a scrape.
#[derive(Debug, Clone, PartialEq)]
pub struct ScriptSnapshot {
    pub stats: StatsData,
    pub late: u64,
    /// Counts between [`BUCKET_BOUNDS_US`] (one more than the bounds).
    pub latency_buckets: Vec<u64>,
    pub lag_buckets: Option<Vec<u64>>,
    pub average: Option<Averages>,
}

/// `--reconnect`'s live figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Outages {
    /// Connections made again after a loss, by every client so far.
    pub reconnects: i64,
    /// Clients out of service now: lost, and not yet back with a success.
    pub clients_out: usize,
}

/// Everything a scrape shows.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    pub phase: Phase,
    /// `--warmup`: what the warm-up counted, apart from the run's figures.
    pub warmup: Option<StatsData>,
    pub clients_connected: usize,
    pub clients_running: usize,
    pub aborted: usize,
    /// The run's progress against `-T` or `-t`, 0 to 1.
    pub progress: f64,
    pub scripts: Vec<ScriptSnapshot>,
    /// `--reconnect`'s figures.
    pub outages: Option<Outages>,
    /// `--rate-stages`, `--client-stages`: the stage in force and the schedule's
    /// target; none before the clients start, and in a run without stages.
    pub stage: Option<StageNow>,
}

impl Live {
    pub fn new(plan: LivePlan) -> Live {
        let scripts = (0..plan.scripts.len())
            .map(|_| ScriptState {
                stats: StatsData::default(),
                late: 0,
                latency: LatencyCounts::new(),
                lag: plan.throttled.then(LatencyCounts::new),
                mark: StatsData::default(),
                average: None,
            })
            .collect();
        Live {
            connected: AtomicUsize::new(0),
            state: Mutex::new(State {
                phase: Phase::Connecting,
                start_us: None,
                measure_from_us: None,
                warmup: None,
                running: 0,
                aborted: 0,
                next_mark_us: 0,
                scripts,
                outages: plan.reconnecting.then(Outages::default),
                stages: None,
                finished_us: None,
            }),
            plan,
        }
    }

    pub fn plan(&self) -> &LivePlan {
        &self.plan
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A scrape that panicked holding it left nothing half-written that matters.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A client thread connected `clients` clients.
    pub fn connected(&self, clients: usize) {
        self.connected.fetch_add(clients, Ordering::Relaxed);
    }

    /// The clients run from `start_us` (when their threads started, µs on the run
    /// clock; under `--warmup` the measured part from `measure_from_us`) and every one
    /// is connected.
    pub fn started(&self, start_us: i64, measure_from_us: Option<i64>, now_us: i64) {
        let mut st = self.lock();
        st.phase = Phase::Measured;
        st.finished_us = None;
        st.start_us = Some(start_us);
        st.measure_from_us = measure_from_us;
        st.warmup = measure_from_us.map(|_| StatsData::default());
        st.running = self.plan.clients;
        st.next_mark_us = now_us + self.plan.interval_us;
        self.connected.store(self.plan.clients, Ordering::Relaxed);
    }

    /// The run's stages are placed on its clock: scrapes show where they are.
    pub fn staged(&self, reader: StageReader) {
        self.lock().stages = Some(reader);
    }

    /// Counts a batch's measured transactions into the histograms; `per_script` are
    /// the collector's counters after it and `warmup` its warm-up's (copied, not
    /// counted twice). Each figure in a
    /// loop of its own, and only the figures the run has: this is the endpoint's whole
    /// cost per transaction (benches/metrics/run.sh).
    pub fn record_batch(
        &self,
        batch: &[TxRecord],
        per_script: &[StatsData],
        warmup: Option<&StatsData>,
    ) {
        let plan = &self.plan;
        let mut st = self.lock();
        if let Some(w) = warmup {
            st.warmup = Some(*w);
        }
        for (s, stats) in st.scripts.iter_mut().zip(per_script) {
            s.stats = *stats;
        }
        let successes = || batch.iter().filter(|r| r.outcome == TxOutcome::Success);
        match st.scripts.as_mut_slice() {
            [one] => one.latency.record_successes(batch),
            scripts => {
                for r in successes() {
                    scripts[r.script as usize].latency.record(r.latency);
                }
            }
        }
        if let Some(limit) = plan.latency_limit_us {
            for r in successes().filter(|r| r.latency > limit as f64) {
                st.scripts[r.script as usize].late += 1;
            }
        }
        if plan.throttled {
            for r in successes() {
                if let Some(lag) = &mut st.scripts[r.script as usize].lag {
                    lag.record(r.lag);
                }
            }
        }
    }

    /// `--reconnect`: `reconnects` so far, `clients_out` out of service now.
    pub fn link(&self, reconnects: i64, clients_out: usize) {
        self.lock().outages = Some(Outages {
            reconnects,
            clients_out,
        });
    }

    /// A client aborted.
    pub fn aborted(&self) {
        self.lock().aborted += 1;
    }

    /// A client is done.
    pub fn client_done(&self) {
        let mut st = self.lock();
        st.running = st.running.saturating_sub(1);
        let _ = self
            .connected
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1));
    }

    /// At `now_us`: ends the `-P`-style interval if it is over.
    pub fn tick(&self, now_us: i64) {
        let mut st = self.lock();
        if st.phase != Phase::Measured || now_us < st.next_mark_us {
            return;
        }
        while st.next_mark_us <= now_us {
            st.next_mark_us += self.plan.interval_us;
        }
        for s in &mut st.scripts {
            let n = (s.stats.counts.cnt - s.mark.counts.cnt) as f64;
            s.average = (n > 0.0).then(|| Averages {
                latency_us: (s.stats.latency.sum - s.mark.latency.sum) / n,
                lag_us: (s.stats.lag.sum - s.mark.lag.sum) / n,
            });
            s.mark = s.stats;
        }
    }

    /// The run is over at `now_us`: what is counted now is what the report shows.
    pub fn finished(&self, now_us: i64) {
        let mut st = self.lock();
        st.phase = Phase::Finished;
        st.finished_us = Some(now_us);
        st.running = 0;
        self.connected.store(0, Ordering::Relaxed);
    }

    /// What a scrape at `now_us` shows.
    pub fn snapshot(&self, now_us: i64) -> Snapshot {
        let st = self.lock();
        let scripts = st
            .scripts
            .iter()
            .map(|s| ScriptSnapshot {
                stats: s.stats,
                late: s.late,
                latency_buckets: s.latency.counts_between(&BUCKET_BOUNDS_US),
                lag_buckets: s.lag.as_ref().map(|l| l.counts_between(&BUCKET_BOUNDS_US)),
                average: s.average,
            })
            .collect();
        let warming_up = st.measure_from_us.is_some_and(|at| now_us < at);
        Snapshot {
            phase: match st.phase {
                Phase::Measured if warming_up => Phase::Warmup,
                phase => phase,
            },
            warmup: st.warmup,
            clients_connected: self.connected.load(Ordering::Relaxed),
            clients_running: st.running,
            aborted: st.aborted,
            progress: self.progress(&st, now_us),
            scripts,
            outages: st.outages,
            stage: st
                .stages
                .as_ref()
                .map(|read| read(st.finished_us.unwrap_or(now_us))),
        }
    }

    /// The fraction of `-T` gone, or of the `-t` transactions done (every client's,
    /// failed and skipped ones included), at most 1; 0 in a warm-up.
    fn progress(&self, st: &State, now_us: i64) -> f64 {
        let Some(start) = st.measure_from_us.or(st.start_us) else {
            return 0.0;
        };
        let fraction = match self.plan.limit {
            Limit::Duration(secs) => (now_us - start) as f64 / (secs as f64 * 1e6),
            Limit::Transactions(per_client) => {
                let done: i64 = st.scripts.iter().map(|s| s.stats.total()).sum();
                done as f64 / (i64::from(per_client) as f64 * self.plan.clients as f64)
            }
        };
        match st.phase {
            Phase::Finished => 1.0,
            _ => fraction.clamp(0.0, 1.0),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(limit: Limit) -> LivePlan {
        LivePlan {
            scripts: vec!["a".into(), "b".into()],
            weights: vec![1, 1],
            clients: 2,
            throttled: true,
            latency_limit_us: Some(2_000),
            limit,
            interval_us: 1_000_000,
            reconnecting: false,
        }
    }

    fn tx(script: u32, outcome: TxOutcome, latency: f64, lag: f64) -> TxRecord {
        TxRecord {
            script,
            outcome,
            latency,
            lag,
            tries: 1,
            end_us: 0,
        }
    }

    #[test]
    fn counts_per_script_with_histograms_lateness_and_interval_averages() {
        let live = Live::new(plan(Limit::Transactions(2)));
        live.connected(1);
        assert_eq!(live.snapshot(0).clients_connected, 1);
        assert_eq!(live.snapshot(0).phase, Phase::Connecting);
        live.started(0, None, 0);
        let batch = [
            tx(0, TxOutcome::Success, 1_000.0, 10.0),
            tx(0, TxOutcome::Success, 3_000.0, 30.0),
            tx(1, TxOutcome::SerializationFailure, 0.0, 0.0),
        ];
        let mut per_script = [StatsData::default(); 2];
        for r in &batch {
            per_script[r.script as usize].accum(r.outcome, r.latency, r.lag, r.tries, true);
        }
        live.record_batch(&batch, &per_script, None);
        live.tick(999_999);
        assert_eq!(
            live.snapshot(0).scripts[0].average,
            None,
            "no interval over yet"
        );
        live.tick(1_000_000);
        let s = live.snapshot(1_000_000);
        assert_eq!((s.clients_running, s.clients_connected), (2, 2));
        assert_eq!(s.progress, 0.75);
        let a = &s.scripts[0];
        assert_eq!((a.stats.counts.cnt, a.late), (2, 1));
        assert_eq!(
            a.average,
            Some(Averages {
                latency_us: 2_000.0,
                lag_us: 20.0
            })
        );
        assert_eq!(a.latency_buckets.iter().sum::<u64>(), 2);
        assert_eq!(
            a.latency_buckets[5], 1,
            "1 ms is below 2 ms, not below 1 ms"
        );
        assert_eq!(a.lag_buckets.as_ref().unwrap()[0], 2);
        assert_eq!(s.scripts[1].stats.counts.serialization_failures, 1);
        live.aborted();
        live.client_done();
        live.finished(0);
        let s = live.snapshot(5_000_000);
        assert_eq!(
            (s.phase, s.clients_running, s.aborted),
            (Phase::Finished, 0, 1)
        );
        assert_eq!(s.progress, 1.0);
    }

    #[test]
    fn duration_progress_counts_from_the_threads_start() {
        let live = Live::new(plan(Limit::Duration(10)));
        assert_eq!(live.snapshot(5).progress, 0.0);
        live.started(1_000_000, None, 2_000_000);
        assert_eq!(live.snapshot(3_500_000).progress, 0.25);
        assert_eq!(live.snapshot(99_000_000).progress, 1.0);
    }

    #[test]
    fn a_warm_up_is_its_own_phase_and_progress_counts_from_its_end() {
        let live = Live::new(plan(Limit::Duration(10)));
        live.started(0, Some(5_000_000), 0);
        let s = live.snapshot(1_000_000);
        assert_eq!((s.phase, s.progress), (Phase::Warmup, 0.0));
        assert_eq!(s.warmup, Some(StatsData::default()));
        let mut warm = StatsData::default();
        warm.counts.cnt = 7;
        live.record_batch(&[], &[StatsData::default(); 2], Some(&warm));
        let s = live.snapshot(7_500_000);
        assert_eq!((s.phase, s.progress), (Phase::Measured, 0.25));
        assert_eq!(s.warmup.map(|w| w.counts.cnt), Some(7));
    }

    #[test]
    fn the_stages_are_read_at_the_scrape_and_stay_where_the_run_ended() {
        let live = Live::new(plan(Limit::Duration(10)));
        live.started(0, None, 0);
        assert_eq!(live.snapshot(1).stage, None, "no stages, none");
        // A schedule of 10 s ramping to 100 tps, in two stages of 5 s.
        live.staged(Box::new(|t| StageNow {
            stage: if t < 5_000_000 { 1 } else { 2 },
            stages: 2,
            target: StageTarget::Rate(t as f64 / 100_000.0),
        }));
        let at = |t| live.snapshot(t).stage.unwrap();
        assert_eq!(
            (at(2_500_000).stage, at(2_500_000).target),
            (1, StageTarget::Rate(25.0))
        );
        assert_eq!((at(7_500_000).stage, at(7_500_000).stages), (2, 2));
        live.finished(9_000_000);
        // The linger shows the run's last instant, however long it lasts.
        assert_eq!(at(60_000_000).target, StageTarget::Rate(90.0));
    }
}
