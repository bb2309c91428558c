//! What a `--reconnect` run saw of the server's outages, as its result keeps it: each
//! outage window as the application saw it (the last success before it, the first
//! failure, the first success after it), how many clients it touched, the failed
//! transactions by SQLSTATE, the reconnections, and the time until throughput was
//! back at 95% of its level before.
//!
//! - `windows`: the outage windows from each client's own spells out of service and
//!   the run's successes per tenth of a second (pure);
//! - `render`: the block printed after the report, and the SQLSTATE classes' names.
//!
//! Instants are Unix µs, as the server's log can be set beside them; the block prints
//! them as UTC clock times to the millisecond and as seconds into the run.

mod render;
#[cfg(test)]
mod tests;
mod windows;

pub use render::{class_name, render_block};
pub use windows::{outages, Spell, SuccessBins, BIN_US};

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The first wait between two connection attempts after a loss, ms; each wait
/// doubles it, up to [`BACKOFF_MAX_MS`].
pub const BACKOFF_FIRST_MS: i64 = 10;
/// The longest wait between two connection attempts, ms: an outage seen by a
/// waiting client ends at most this long after the server is ready again.
pub const BACKOFF_MAX_MS: i64 = 200;

/// One SQLSTATE class's failed transactions, and each SQLSTATE's of them.
pub type ClassFailures<'a> = (i64, Vec<(&'a str, i64)>);

/// `--reconnect`: the outages its clients rode through.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Availability {
    /// `--reconnect-timeout`, s: a client that could not connect again within it
    /// aborted.
    pub reconnect_timeout_s: f64,
    /// The longest wait between two connection attempts, ms.
    pub backoff_max_ms: i64,
    /// When the measured part began, Unix µs (the block's "at N s" counts from it).
    pub measured_from_unix_us: i64,
    /// Connections made again after a loss, by every client.
    pub reconnects: i64,
    /// Clients that aborted because they could not connect again in time.
    pub gave_up: usize,
    /// Transactions in doubt: failed or cut short by a lost connection after sending
    /// what may commit, so the server may have committed them (the run's
    /// [`crate::run::RunResult::in_doubt`]). Absent from files written before it was
    /// counted.
    #[serde(default)]
    pub in_doubt: i64,
    /// Transactions that failed on a lost connection or a refusal, by SQLSTATE
    /// (`08006` where the connection ended without a word from the server).
    pub failed: BTreeMap<String, i64>,
    /// The outage windows, in order.
    pub outages: Vec<Outage>,
}

impl Availability {
    /// Another worker's block added (`pgbench-report merge`): the counts summed (the
    /// reconnections, the clients that gave up, the transactions in doubt, the failed
    /// ones by SQLSTATE), the measured part from the earliest start, and its outages
    /// kept as its own windows, in order of their first failure. Windows of different
    /// workers that overlap are kept apart, not joined: each one's clients, throughput
    /// before it and recovery to 95% of it are its worker's clients' own, and joining
    /// them would need the clients' spells, which a results file does not keep.
    pub fn merge(&mut self, other: &Availability) {
        self.measured_from_unix_us = self.measured_from_unix_us.min(other.measured_from_unix_us);
        self.reconnects += other.reconnects;
        self.gave_up += other.gave_up;
        self.in_doubt += other.in_doubt;
        for (state, n) in &other.failed {
            *self.failed.entry(state.clone()).or_default() += n;
        }
        self.outages.extend(other.outages.iter().cloned());
        // Stable: the first worker's window first where two began at one instant.
        self.outages.sort_by_key(|o| o.first_failure_unix_us);
    }
}

/// One outage window as the application saw it: the union of the clients' spells
/// out of service that overlap.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outage {
    /// The last successful transaction, of the clients it touched, that ended before
    /// its first failure (the server went away after it), Unix µs.
    pub last_success_before_unix_us: Option<i64>,
    /// The first failure: a client's transaction failed, or its connection attempt.
    pub first_failure_unix_us: i64,
    /// The first transaction that succeeded again, of the clients it touched; `None`
    /// when none did before the run ended.
    pub first_success_after_unix_us: Option<i64>,
    /// When the last of the clients it touched had a success again.
    pub all_back_unix_us: Option<i64>,
    /// Clients it touched.
    pub clients: usize,
    /// Transactions that failed in it.
    pub failed_transactions: i64,
    /// Of those, the ones in doubt (the server may have committed them).
    #[serde(default)]
    pub in_doubt: i64,
    /// Connections made again in it.
    pub reconnects: i64,
    /// Clients of it that gave up connecting again (`--reconnect-timeout`).
    #[serde(default)]
    pub gave_up: usize,
    /// An outage that was not over (no client of it had a success again): the last
    /// instant it was seen going on, the last give-up or the run's end, Unix µs.
    /// It lasted at least until then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seen_until_unix_us: Option<i64>,
    /// Successful transactions per second in the ten seconds before it (fewer at the
    /// run's start or after another outage; `None` under one second).
    pub tps_before: Option<f64>,
    /// When a second's throughput was first back at 95% of `tps_before` (the start of
    /// that second, to a tenth of a second).
    pub back_to_95_unix_us: Option<i64>,
}

impl Outage {
    /// From the first failure to the first success after it, s: the outage the
    /// application saw (`None` if it lasted past the run's end).
    pub fn length_s(&self) -> Option<f64> {
        self.first_success_after_unix_us
            .map(|end| (end - self.first_failure_unix_us) as f64 / 1e6)
    }

    /// How long it lasted at the least, s: its length, or for one not over, from
    /// the first failure to the last instant it was seen going on.
    pub fn at_least_s(&self) -> f64 {
        let end = self
            .first_success_after_unix_us
            .or(self.seen_until_unix_us)
            .unwrap_or(self.first_failure_unix_us);
        (end - self.first_failure_unix_us) as f64 / 1e6
    }

    /// Whether its clients rode through it: it ended with a success and none of its
    /// clients gave up.
    pub fn ridden_through(&self) -> bool {
        self.first_success_after_unix_us.is_some() && self.gave_up == 0
    }

    /// From the last success before it to the first success after it, s: the longest
    /// the outage can have been.
    pub fn bound_s(&self) -> Option<f64> {
        let start = self.last_success_before_unix_us?;
        self.first_success_after_unix_us
            .map(|end| (end - start) as f64 / 1e6)
    }

    /// From the first failure to throughput back at 95% of its level before, s.
    pub fn recovery_s(&self) -> Option<f64> {
        self.back_to_95_unix_us
            .map(|t| (t - self.first_failure_unix_us) as f64 / 1e6)
    }
}

impl Availability {
    /// The outages' lengths added up, s; one not over counts for as long as it was
    /// seen going on (a lower bound: see [`Availability::all_over`]).
    pub fn total_outage_s(&self) -> f64 {
        self.outages
            .iter()
            .map(Outage::at_least_s)
            .fold(0.0, |a, b| a + b)
    }

    /// The longest outage, s (at least, for one not over): what `compare` sets side
    /// by side.
    pub fn longest_outage_s(&self) -> Option<f64> {
        self.outages
            .iter()
            .map(Outage::at_least_s)
            .max_by(f64::total_cmp)
    }

    /// Whether every outage ended with a success before the run's end: else the
    /// lengths above are lower bounds.
    pub fn all_over(&self) -> bool {
        self.outages.iter().all(|o| o.length_s().is_some())
    }

    /// Whether the clients rode through every outage: each ended, and no client gave
    /// up.
    pub fn ridden_through(&self) -> bool {
        self.gave_up == 0 && self.outages.iter().all(Outage::ridden_through)
    }

    /// Failed transactions by SQLSTATE class (its first two characters), with the
    /// SQLSTATEs of each.
    pub fn failed_by_class(&self) -> BTreeMap<String, ClassFailures<'_>> {
        let mut classes: BTreeMap<String, ClassFailures> = BTreeMap::new();
        for (state, n) in &self.failed {
            let class = state.get(..2).unwrap_or(state).to_string();
            let entry = classes.entry(class).or_default();
            entry.0 += n;
            entry.1.push((state, *n));
        }
        classes
    }
}
