//! Ctrl-C during initialisation, as pgbench's `setup_cancel_handler` does it: every
//! connection opened for `-i` registers its cancel key; on SIGINT the running
//! statements are cancelled ("Cancel request sent") and client-side generation stops,
//! so the run ends with the server's "canceling statement due to user request" and
//! exit status 1 rather than dying in the middle of a COPY.

use super::error::InitError;
use crate::signals::{Attached, OnSignal, Reaction, Signals};
use pgbench_wire::{CancelToken, Connection};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

static TOKENS: Mutex<Vec<CancelToken>> = Mutex::new(Vec::new());
static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Ctrl-C's handler for `-i` and a workload's load, attached to the process's signal
/// handling until the returned attachment is dropped. SIGTERM keeps its own action
/// (the process ends), as for pgbench.
pub fn attach(signals: &Signals) -> Attached {
    signals.attach(std::sync::Arc::new(CancelLoad))
}

/// Cancels the load's statements on SIGINT.
struct CancelLoad;

impl OnSignal for CancelLoad {
    fn signal(&self, sig: i32) -> Reaction {
        if sig != libc::SIGINT {
            return Reaction::Exit;
        }
        cancel();
        Reaction::Handled
    }
}

/// Cancel first, then stop the generation loops: stopped early, a COPY could end
/// before the server sees the cancel, and the process exit before the "Cancel request
/// sent" line (pgbench's handler runs before its loop resumes). stderr stays ours until
/// the line is out: the cancelled statement's error, printed by the main thread, comes
/// after it, as in pgbench (whose handler runs on the main thread before it resumes).
fn cancel() {
    let mut err = std::io::stderr().lock();
    let tokens = TOKENS.lock().unwrap_or_else(|e| e.into_inner());
    let mut sent = false;
    for t in tokens.iter() {
        sent |= t.cancel().is_ok();
    }
    if sent {
        let _ = std::io::Write::write_all(&mut err, b"Cancel request sent\n");
    }
    REQUESTED.store(true, Ordering::SeqCst);
}

/// Makes `conn`'s running statements cancellable by Ctrl-C.
pub(crate) fn register(conn: &Connection) {
    TOKENS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(conn.cancel_token());
}

/// Whether Ctrl-C was pressed (generation loops stop).
pub(crate) fn requested() -> bool {
    REQUESTED.load(Ordering::Relaxed)
}

/// After a COPY that ended without the server's error: if Ctrl-C stopped the rows
/// early, fail as if the server had cancelled it, so a partial load is never
/// committed.
pub(crate) fn check() -> Result<(), InitError> {
    if requested() {
        return Err(InitError::CopyEnd {
            message: "ERROR:  canceling statement due to user request".into(),
        });
    }
    Ok(())
}
