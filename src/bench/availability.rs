//! `--reconnect`'s accounting in the collector: what clients say of their connections
//! ([`LinkEvent`]: lost, made again, the first success after) becomes each client's
//! spells out of service; the successes of every batch fill the throughput's tenths
//! of a second; at the end both become the result's outage windows
//! ([`pgbench_results::availability`]). It keeps its own state, apart from the
//! collector's counters, and costs nothing to a run without `--reconnect`.

use super::events::{LinkEvent, TxRecord};
use super::plan::AvailabilityPlan;
use pgbench_results::availability::{self, Availability, Spell, SuccessBins};
use pgbench_results::TxOutcome;
use std::collections::{BTreeMap, HashMap};

/// The SQLSTATE of a transaction whose connection ended without a word from the
/// server (libpq has none for it): `connection_failure`.
pub const CONNECTION_FAILURE: [u8; 5] = *b"08006";

/// The collector's `--reconnect` accounting.
#[derive(Debug, Clone)]
pub struct Outages {
    plan: AvailabilityPlan,
    spells: Vec<Spell>,
    /// Each client's spell under way (an index into `spells`).
    open: HashMap<usize, usize>,
    bins: SuccessBins,
    failed: BTreeMap<String, i64>,
    reconnects: i64,
    gave_up: usize,
}

impl Outages {
    /// Counting throughput from `origin_us`, when the clients were let go.
    pub fn new(plan: AvailabilityPlan, origin_us: i64) -> Outages {
        Outages {
            plan,
            spells: Vec::new(),
            open: HashMap::new(),
            bins: SuccessBins::new(origin_us),
            failed: BTreeMap::new(),
            reconnects: 0,
            gave_up: 0,
        }
    }

    /// A client's batch: its successes into the throughput (a warm-up's too).
    pub fn record_batch(&mut self, batch: &[TxRecord]) {
        for r in batch.iter().filter(|r| r.outcome == TxOutcome::Success) {
            self.bins.add(r.end_us);
        }
    }

    /// What a client said of its connection.
    pub fn link(&mut self, event: LinkEvent) {
        match event {
            LinkEvent::Lost {
                client,
                at,
                last_success,
                failed,
            } => {
                let spell = match self.open.get(&client) {
                    Some(&i) => i,
                    None => {
                        self.spells.push(Spell {
                            client,
                            first_failure_us: at,
                            last_success_before_us: last_success,
                            first_success_after_us: None,
                            failed: 0,
                            in_doubt: 0,
                            reconnects: 0,
                            gave_up_us: None,
                        });
                        self.open.insert(client, self.spells.len() - 1);
                        self.spells.len() - 1
                    }
                };
                if let Some((state, in_doubt)) = failed {
                    self.spells[spell].failed += 1;
                    self.spells[spell].in_doubt += i64::from(in_doubt);
                    let state = String::from_utf8_lossy(&state).into_owned();
                    *self.failed.entry(state).or_default() += 1;
                }
            }
            LinkEvent::Reconnected { client, .. } => {
                self.reconnects += 1;
                if let Some(&i) = self.open.get(&client) {
                    self.spells[i].reconnects += 1;
                }
            }
            LinkEvent::Recovered { client, at } => {
                if let Some(i) = self.open.remove(&client) {
                    self.spells[i].first_success_after_us = Some(at);
                }
            }
            LinkEvent::GaveUp { client, at } => {
                self.gave_up += 1;
                if let Some(i) = self.open.remove(&client) {
                    self.spells[i].gave_up_us = Some(at);
                }
            }
        }
    }

    /// Connections made again so far.
    pub fn reconnects(&self) -> i64 {
        self.reconnects
    }

    /// Clients out of service now: lost, and not yet back with a success.
    pub fn out_now(&self) -> usize {
        self.open.len()
    }

    /// The result's block, for a run whose last client ended at `end_us` and whose
    /// measured part began at `measured_from_us` (run clock; `epoch_shift_us` turns it
    /// into Unix µs), with the run's transactions in doubt.
    pub fn finish(
        self,
        end_us: i64,
        measured_from_us: i64,
        epoch_shift_us: i64,
        in_doubt: i64,
    ) -> Availability {
        Availability {
            in_doubt,
            reconnect_timeout_s: self.plan.timeout_us as f64 / 1e6,
            backoff_max_ms: availability::BACKOFF_MAX_MS,
            measured_from_unix_us: measured_from_us + epoch_shift_us,
            reconnects: self.reconnects,
            gave_up: self.gave_up,
            failed: self.failed,
            outages: availability::outages(&self.spells, &self.bins, end_us, epoch_shift_us),
        }
    }
}

/// The wait before connection attempt `attempt` (from 1) after a loss, µs: doubling
/// from [`availability::BACKOFF_FIRST_MS`] up to [`availability::BACKOFF_MAX_MS`].
pub fn backoff_us(attempt: u32) -> i64 {
    let doubled = availability::BACKOFF_FIRST_MS << attempt.saturating_sub(1).min(16);
    doubled.min(availability::BACKOFF_MAX_MS) * 1000
}

/// Whether an error with this SQLSTATE means the server will not run transactions on
/// this connection any more, so that a client under `--reconnect` connects again:
/// class 08 (connection exception), 57P01-57P05 (shutting down, crashed, cannot
/// connect now, idle-session timeout...), and 25006 (read-only transaction: a primary
/// demoted under it).
pub fn is_loss(sqlstate: &str) -> bool {
    sqlstate.starts_with("08") || sqlstate.starts_with("57P0") || sqlstate == "25006"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan() -> AvailabilityPlan {
        AvailabilityPlan {
            timeout_us: 5_000_000,
        }
    }

    #[test]
    fn the_backoff_doubles_to_its_bound() {
        let waits: Vec<i64> = (1..=7).map(backoff_us).collect();
        assert_eq!(
            waits,
            [10_000, 20_000, 40_000, 80_000, 160_000, 200_000, 200_000]
        );
        assert_eq!(backoff_us(u32::MAX), 200_000);
    }

    #[test]
    fn what_counts_as_a_loss() {
        for state in ["08006", "08003", "57P01", "57P02", "57P03", "25006"] {
            assert!(is_loss(state), "{state}");
        }
        for state in ["57014", "40001", "25P02", "23505", "42P01"] {
            assert!(!is_loss(state), "{state}");
        }
    }

    #[test]
    fn a_clients_losses_until_its_first_success_are_one_spell() {
        let mut o = Outages::new(plan(), 0);
        let ok = |end_us| TxRecord {
            script: 0,
            outcome: TxOutcome::Success,
            latency: 100.0,
            lag: 0.0,
            tries: 1,
            end_us,
        };
        o.record_batch(&(0..20).map(|i| ok(i * 100_000)).collect::<Vec<_>>());
        let lost = |client, at, failed| LinkEvent::Lost {
            client,
            at,
            last_success: Some(1_900_000),
            failed,
        };
        o.link(lost(0, 2_000_000, Some((*b"57P01", false))));
        o.link(lost(1, 2_010_000, Some((CONNECTION_FAILURE, true))));
        assert_eq!(o.out_now(), 2);
        o.link(LinkEvent::Reconnected {
            client: 0,
            at: 2_500_000,
        });
        // The new connection is refused work at once: the same spell.
        o.link(lost(0, 2_600_000, Some((*b"57P03", false))));
        o.link(LinkEvent::Reconnected {
            client: 0,
            at: 2_900_000,
        });
        o.link(LinkEvent::Recovered {
            client: 0,
            at: 3_000_000,
        });
        o.link(LinkEvent::Reconnected {
            client: 1,
            at: 2_950_000,
        });
        o.link(LinkEvent::Recovered {
            client: 1,
            at: 3_100_000,
        });
        assert_eq!((o.out_now(), o.reconnects()), (0, 3));
        let a = o.finish(4_000_000, 0, 10, 1);
        assert_eq!(a.outages.len(), 1);
        let w = &a.outages[0];
        assert_eq!((w.clients, w.failed_transactions, w.reconnects), (2, 3, 3));
        assert_eq!((w.in_doubt, a.in_doubt, w.gave_up), (1, 1, 0));
        assert_eq!(w.first_failure_unix_us, 2_000_010);
        assert_eq!(w.first_success_after_unix_us, Some(3_000_010));
        assert_eq!(w.all_back_unix_us, Some(3_100_010));
        assert_eq!(w.tps_before, Some(10.0));
        let failed: Vec<(&str, i64)> = a.failed.iter().map(|(s, n)| (s.as_str(), *n)).collect();
        assert_eq!(failed, [("08006", 1), ("57P01", 1), ("57P03", 1)]);
    }
}
