//! `--reconnect` in the client: a connection lost (or a server that refuses work on
//! it: shutting down, read-only) fails the transaction in flight with its SQLSTATE,
//! and the client connects again with the same options, waiting a bounded backoff
//! between attempts, then goes on with the next transaction of its script. What it
//! saw goes to the collector as [`LinkEvent`]s. A client that cannot connect again
//! within `--reconnect-timeout` aborts, as one without `--reconnect` does at once.
//!
//! A stop (Ctrl-C, the end of an overdue run) shuts the sockets: what fails then is
//! the stop's doing, never a loss to ride through.

use super::failure::TxError;
use super::{Client, Phase, Wait};
use crate::bench::availability::{backoff_us, is_loss, CONNECTION_FAILURE};
use crate::bench::error::{AbortReason, ClientAbort};
use crate::bench::events::Event;
use crate::bench::events::LinkEvent;
use pgbench_results::TxOutcome;
use pgbench_wire::Connection;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// What a client under `--reconnect` keeps between transactions.
#[derive(Debug, Clone, Default)]
pub(super) struct Riding {
    /// When its last successful transaction ended.
    last_success: Option<i64>,
    /// It lost a connection and has not had a success since.
    recovering: bool,
    /// The SQLSTATE of a notice that said the connection is ending (a server's
    /// immediate shutdown warns each backend's client with 57P01 before it closes),
    /// packed in the low 40 bits; 0 for none. Set by the connection's notice handler.
    ending_notice: Arc<AtomicU64>,
}

/// A SQLSTATE's 5 bytes in a `u64` (never 0).
fn pack(state: [u8; 5]) -> u64 {
    state.iter().fold(0, |v, &b| v << 8 | u64::from(b))
}

fn unpack(v: u64) -> [u8; 5] {
    std::array::from_fn(|i| (v >> (8 * (4 - i))) as u8)
}

/// Where a client stands while it connects again (in [`Phase::Reconnecting`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Reconnecting {
    /// When the loss was seen: `--reconnect-timeout` counts from it.
    since: i64,
    /// Attempts made so far.
    attempts: u32,
    /// When the next attempt is due.
    next_at: i64,
    /// A `-C` connection that failed before its transaction began: that transaction
    /// (script, `-R` slot) starts once connected, on its own schedule.
    resume: Option<(usize, Option<i64>)>,
}

impl Client<'_> {
    /// Whether the client rides through a loss now (`--reconnect`, and the run is not
    /// being stopped).
    #[inline]
    pub(super) fn rides_through(&self) -> bool {
        self.riding.is_some() && !self.ctx.control.stopping()
    }

    /// A command failed because the connection did (`abort` is pgbench's word for
    /// it): under `--reconnect` a loss of the transaction at command `index`.
    /// The SQLSTATE is the one a notice gave as the connection ended, if one did.
    #[cold]
    pub(super) fn lost_or(&self, index: usize, abort: ClientAbort) -> TxError {
        match &self.riding {
            Some(r) if !self.ctx.control.stopping() => {
                let state = match r.ending_notice.load(Ordering::Relaxed) {
                    0 => CONNECTION_FAILURE,
                    v => unpack(v),
                };
                TxError::Lost(state, index, false)
            }
            _ => abort.into(),
        }
    }

    /// Under `--reconnect`, a new connection's notices are printed as ever (libpq's
    /// way), and one with a loss's SQLSTATE is kept for the loss that follows.
    pub(super) fn watch_notices(&self, conn: &mut Connection) {
        let Some(r) = &self.riding else {
            return;
        };
        let ending = Arc::clone(&r.ending_notice);
        ending.store(0, Ordering::Relaxed);
        conn.set_notice_handler(Box::new(move |notice| {
            eprintln!("{notice}");
            if is_loss(notice.code()) {
                if let Ok(state) = <[u8; 5]>::try_from(notice.code().as_bytes()) {
                    ending.store(pack(state), Ordering::Relaxed);
                }
            }
        }));
    }

    /// A transaction succeeded at `now`: the first after a loss ends the client's
    /// spell out of service.
    #[inline]
    pub(super) fn succeeded(&mut self, now: i64) {
        if let Some(riding) = &mut self.riding {
            riding.last_success = Some(now);
            if riding.recovering {
                riding.recovering = false;
                self.tell(LinkEvent::Recovered {
                    client: self.id,
                    at: now,
                });
            }
        }
    }

    fn tell(&self, event: LinkEvent) {
        let _ = self.ctx.events.send(Event::Link(event));
    }

    /// The loss of the transaction in flight at command `command`, with `sqlstate`
    /// (`refused`: the server refused that command): counted as failed (in doubt if
    /// it may have committed), the connection dropped, the client connecting again.
    #[cold]
    pub(super) fn lost(
        &mut self,
        sqlstate: [u8; 5],
        command: usize,
        refused: bool,
    ) -> Result<Option<Wait>, ClientAbort> {
        let now = self.now();
        self.ctx.control.transaction_ended(self.local_index);
        self.detach();
        let in_doubt = self.ctx.scripts[self.tx.script]
            .doubt
            .in_doubt(command, true, refused);
        // Between transactions now: the client's end counts nothing more of this one.
        self.phase = Phase::Choose;
        // As pgbench does for a failure handled after -T: not counted, but in doubt
        // if it may have committed.
        if self.ctx.control.clock.timer_exceeded() {
            if in_doubt {
                self.record.cut_short_in_doubt();
            }
            return Ok(Some(Wait::Done));
        }
        let script = self.tx.script;
        if self.ctx.plan.verbose_errors {
            self.ctx.out.info(&format!(
                "client {} lost its connection in command {command} of script {script} \
                 (SQLSTATE {}); connecting again",
                self.id,
                String::from_utf8_lossy(&sqlstate)
            ));
        }
        self.record.failed(script, command, now);
        let failed = match in_doubt {
            true => TxOutcome::InDoubt,
            false => TxOutcome::OtherFailure,
        };
        self.record
            .transaction(script, failed, (0.0, 0.0), self.tx.tries, now);
        self.record.flush_all();
        self.spell_begins(now, Some((sqlstate, in_doubt)));
        if self.is_done() {
            return Ok(Some(Wait::Done));
        }
        self.phase = Phase::Reconnecting(Reconnecting {
            since: now,
            attempts: 0,
            next_at: now,
            resume: None,
        });
        Ok(None)
    }

    /// A `-C` connection failed before the transaction of `script` (due at
    /// `scheduled`) began: under `--reconnect` the client waits and tries again, then
    /// starts it; else pgbench's abort.
    pub(super) fn connect_failed(
        &mut self,
        abort: ClientAbort,
        script: usize,
        scheduled: Option<i64>,
    ) -> Result<(), ClientAbort> {
        if !self.rides_through() {
            return Err(abort);
        }
        let now = self.now();
        self.ctx.control.transaction_ended(self.local_index);
        self.spell_begins(now, None);
        self.phase = Phase::Reconnecting(Reconnecting {
            since: now,
            attempts: 1,
            next_at: now + backoff_us(1),
            resume: Some((script, scheduled)),
        });
        Ok(())
    }

    /// Tells the collector of a loss at `now` (`failed`: the SQLSTATE of the
    /// transaction it failed, and whether that one is in doubt).
    fn spell_begins(&mut self, now: i64, failed: Option<([u8; 5], bool)>) {
        let Some(riding) = &mut self.riding else {
            return;
        };
        riding.recovering = true;
        let last_success = riding.last_success;
        self.tell(LinkEvent::Lost {
            client: self.id,
            at: now,
            last_success,
            failed,
        });
    }

    /// [`Phase::Reconnecting`]: one connection attempt when it is due. `None` once
    /// connected (the client goes on), else the time to wait for the next attempt.
    pub(super) fn reconnect_attempt(
        &mut self,
        mut r: Reconnecting,
    ) -> Result<Option<Wait>, ClientAbort> {
        let control = &self.ctx.control;
        if control.stopping() || control.clock.timer_exceeded() {
            return Ok(Some(Wait::Done));
        }
        let now = self.now();
        if now < r.next_at {
            return Ok(Some(Wait::Until(r.next_at)));
        }
        r.attempts += 1;
        let error = match Connection::connect(&self.group.conn_opts).and_then(|c| self.attach(c)) {
            Ok(()) => {
                self.prepared.iter_mut().flatten().for_each(|p| *p = false);
                self.pending_syncs = 0;
                self.tell(LinkEvent::Reconnected {
                    client: self.id,
                    at: self.now(),
                });
                match r.resume {
                    Some((script, scheduled)) => self.start_transaction(script, scheduled)?,
                    None => self.phase = Phase::Choose,
                }
                return Ok(None);
            }
            Err(e) => e,
        };
        let now = self.now();
        let timeout = self.riding_timeout_us();
        if now - r.since >= timeout {
            self.tell(LinkEvent::GaveUp {
                client: self.id,
                at: now,
            });
            let why = format!(
                "could not connect again within --reconnect-timeout={} s: {error}",
                timeout / 1_000_000
            );
            return Err(ClientAbort::new(self.id, AbortReason::Connect).because(why));
        }
        r.next_at = (now + backoff_us(r.attempts)).min(r.since + timeout);
        self.phase = Phase::Reconnecting(r);
        self.record.flush_before_wait(now, r.next_at);
        Ok(Some(Wait::Until(r.next_at)))
    }

    fn riding_timeout_us(&self) -> i64 {
        self.ctx.plan.availability.map_or(0, |a| a.timeout_us)
    }
}
