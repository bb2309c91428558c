//! The stats thread: receives every client's batches, keeps the run's counters and
//! histograms, prints a `progress:` line every `-P` seconds, and hands the totals to
//! the report when the last client is done.

use super::percentiles::LatencyHistogram;
use super::progress::{progress_line, ProgressFormat};
use super::stats::{CommandStats, StatsData, TxOutcome};
use super::{now_us, StatsMsg, TxRecord};
use crossbeam_channel::{Receiver, TryRecvError};
use std::time::Duration;

/// How long the collector sleeps between looks at the channel, µs.
const POLL_US: i64 = 20_000;

/// What the collector needs to know of the run.
pub struct Config {
    pub nclients: usize,
    pub nscripts: usize,
    /// `-P` seconds, 0 = no progress lines.
    pub progress_s: i64,
    pub progress_fmt: ProgressFormat,
    /// `-L` µs, 0 = off.
    pub latency_limit: i64,
    pub throttled: bool,
    pub epoch_shift_us: i64,
    /// Keep latency histograms (`--latency-percentiles`).
    pub histograms: bool,
}

/// Everything measured.
pub struct Collected {
    pub total: StatsData,
    pub per_script: Vec<StatsData>,
    pub commands: Vec<Vec<CommandStats>>,
    pub conn_total_duration_us: f64,
    pub latency_late: i64,
    pub aborted: usize,
    pub histogram: LatencyHistogram,
    pub script_histograms: Vec<LatencyHistogram>,
    /// When the last client finished, µs on the run clock.
    pub last_client_end: i64,
}

impl Collected {
    /// Nothing measured yet.
    pub fn new(cfg: &Config) -> Collected {
        Collected {
            total: StatsData::default(),
            per_script: vec![StatsData::default(); cfg.nscripts],
            commands: Vec::new(),
            conn_total_duration_us: 0.0,
            latency_late: 0,
            aborted: 0,
            histogram: LatencyHistogram::new(),
            script_histograms: (0..cfg.nscripts).map(|_| LatencyHistogram::new()).collect(),
            last_client_end: 0,
        }
    }

    /// Counts one transaction: totals, its script's counters, `-L` lateness and,
    /// with `--latency-percentiles`, the histograms.
    #[inline]
    pub fn record(&mut self, cfg: &Config, r: &TxRecord) {
        self.total
            .accum(r.outcome, r.latency, r.lag, r.tries, cfg.throttled);
        self.per_script[r.script as usize].accum(
            r.outcome,
            r.latency,
            r.lag,
            r.tries,
            cfg.throttled,
        );
        if cfg.latency_limit > 0 && r.latency > cfg.latency_limit as f64 {
            self.latency_late += 1;
        }
        if cfg.histograms && r.outcome == TxOutcome::Success {
            self.histogram.record(r.latency);
            self.script_histograms[r.script as usize].record(r.latency);
        }
    }
}

/// Collects until every client said it is done. `start_time` is when the clients'
/// threads started, before connecting: as in pgbench's `threadRun`, progress reports
/// are due every `-P` seconds from then, and count their time from then (so the
/// first interval includes the initial connections).
pub fn collect(cfg: &Config, rx: &Receiver<StatsMsg>, start_time: i64) -> Collected {
    let mut c = Collected::new(cfg);
    let period = cfg.progress_s * 1_000_000;
    let mut next_report = start_time + period;
    let mut last = StatsData::default();
    let mut last_report = start_time;
    let mut done = 0;
    while done < cfg.nclients {
        // The collector polls: it sleeps a little, then takes whatever arrived. Being
        // woken for every batch would cost a futex wake-up (and crossbeam's spinning)
        // per batch, CPU the clients and the server on the same cores need.
        let msg = match rx.try_recv() {
            Ok(m) => Some(m),
            Err(TryRecvError::Disconnected) => break,
            Err(TryRecvError::Empty) => {
                let mut wait = POLL_US;
                if period > 0 {
                    wait = wait.min((next_report - now_us()).max(0));
                }
                std::thread::sleep(Duration::from_micros(wait as u64));
                None
            }
        };
        match msg {
            Some(StatsMsg::Batch(records)) => {
                for r in &records {
                    c.record(cfg, r);
                }
            }
            Some(StatsMsg::ClientDone {
                aborted,
                commands,
                conn_duration_us,
                end_us,
            }) => {
                done += 1;
                c.last_client_end = c.last_client_end.max(end_us);
                if aborted {
                    c.aborted += 1;
                }
                c.conn_total_duration_us += conn_duration_us;
                if c.commands.is_empty() {
                    c.commands = commands;
                } else {
                    for (mine, theirs) in c.commands.iter_mut().zip(&commands) {
                        for (m, t) in mine.iter_mut().zip(theirs) {
                            m.merge(t);
                        }
                    }
                }
            }
            None => {}
        }
        if period > 0 {
            let now = now_us();
            if now >= next_report && done < cfg.nclients {
                let line = progress_line(
                    cfg.progress_fmt,
                    &c.total,
                    &last,
                    (now - last_report) as f64,
                    (now - start_time) as f64 / 1e6,
                    (now + cfg.epoch_shift_us) as f64 / 1e6,
                );
                crate::logging::raw(&line);
                last = c.total;
                last_report = now;
                while now >= next_report {
                    next_report += period;
                }
            }
        }
    }
    c
}
