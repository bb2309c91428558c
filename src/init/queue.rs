//! The work queue of every load spread over connections: pgbench's `-j` load, its
//! statements per table and a resumable load's units (`parallel.rs`, `units.rs`), and
//! a workload's load (TPC-C's units and statements). A thread per connection takes the
//! next item until none is left; the first failure stops the others; the rows written
//! become pgbench's progress lines, printed by the calling thread alone. Generic over
//! the error enum of the layer that uses it ([`QueueError`]), so a workload keeps its
//! own errors.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Instant;

use pgbench_wire::Connection;

use super::error::InitError;
use super::progress::Progress;

/// What the queue needs of a layer's error enum.
pub(crate) trait QueueError: Sized + Send {
    /// A connection stopped because another one failed (or its thread panicked).
    fn aborted() -> Self;

    /// Whether this is [`QueueError::aborted`]: the error to report is another one.
    fn is_aborted(&self) -> bool;

    /// The error a connection ends with when it finds Ctrl-C pressed before it takes
    /// its next item; `None`: it takes the item, whose statements meet the cancel
    /// themselves. Unlike a failure, this does not stop the other connections: each
    /// finds Ctrl-C pressed at its own next item.
    fn interrupted() -> Option<Self>;
}

impl QueueError for InitError {
    fn aborted() -> InitError {
        InitError::Aborted
    }

    fn is_aborted(&self) -> bool {
        matches!(self, InitError::Aborted)
    }

    /// None: pgbench's init meets Ctrl-C in its statements (a cancelled one, or
    /// [`super::interrupt::check`] after a COPY), whatever the number of connections.
    fn interrupted() -> Option<InitError> {
        None
    }
}

/// What a queue's progress lines count: pgbench's `N of M tuples` lines over `total`
/// rows, every 100,000 rows or (`quiet`, `-q`) every 5 seconds.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RowCount {
    pub(crate) total: i64,
    pub(crate) quiet: bool,
}

/// What a connection's work on one item sees of the queue.
pub(crate) struct Queue<'a> {
    report: mpsc::Sender<i64>,
    failed: &'a AtomicBool,
    start: Instant,
}

impl Queue<'_> {
    /// `n` more rows are written, for the progress lines (without them, nothing).
    pub(crate) fn rows(&self, n: i64) {
        // The receiver outlives every connection's thread, so this cannot fail.
        let _ = self.report.send(n);
    }

    /// Whether another connection failed: work that takes long may stop early.
    pub(crate) fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// Seconds since the queue started: the progress lines' clock, for lines of the
    /// work's own that must agree with them.
    pub(crate) fn elapsed(&self) -> f64 {
        self.start.elapsed().as_secs_f64()
    }
}

/// Runs `items` over `conns`: a thread per connection runs `setup` on its connection,
/// then `work` on the next item until none is left. The first failure stops the
/// others at their next item (or sooner, where `work` asks [`Queue::failed`]), and the
/// first real error is returned. With `rows`, what `work` reports through
/// [`Queue::rows`] becomes the progress lines, printed by the calling thread alone, so
/// several connections' rows read like one connection's.
pub(crate) fn run_queue<'c, T: Sync, E: QueueError>(
    conns: impl IntoIterator<Item = &'c mut Connection>,
    items: &[T],
    rows: Option<RowCount>,
    setup: impl Fn(&mut Connection) -> Result<(), E> + Sync,
    work: impl Fn(&mut Connection, &T, &Queue) -> Result<(), E> + Sync,
) -> Result<(), E> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let start = Instant::now();
    let mut progress = rows.map(|rows| {
        Progress::new(
            std::io::stderr(),
            rows.total,
            rows.quiet,
            crate::sys::stderr_is_tty(),
        )
    });
    let (report, reports) = mpsc::channel::<i64>();
    let results = std::thread::scope(|scope| {
        let handles: Vec<_> = conns
            .into_iter()
            .map(|conn| {
                let queue = Queue {
                    report: report.clone(),
                    failed: &failed,
                    start,
                };
                let (next, setup, work) = (&next, &setup, &work);
                scope.spawn(move || {
                    let stop = |e: E| {
                        queue.failed.store(true, Ordering::Relaxed);
                        e
                    };
                    setup(conn).map_err(stop)?;
                    while let Some(item) = items.get(next.fetch_add(1, Ordering::Relaxed)) {
                        if queue.failed() {
                            return Err(E::aborted());
                        }
                        if super::interrupt::requested() {
                            if let Some(e) = E::interrupted() {
                                return Err(e);
                            }
                        }
                        work(conn, item, &queue).map_err(stop)?;
                    }
                    Ok(())
                })
            })
            .collect();
        drop(report);
        // Ends when every connection has finished (all senders dropped).
        let mut done = 0;
        for rows in reports {
            done += rows;
            if let Some(progress) = progress.as_mut() {
                progress.advance(done, start.elapsed().as_secs_f64());
            }
        }
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or(Err(E::aborted())))
            .collect::<Vec<_>>()
    });
    if let Some(progress) = progress.as_mut() {
        progress.finish();
    }
    first_error(results)
}

/// The error to report: the first real one, not a connection that stopped because
/// another one failed.
fn first_error<E: QueueError>(results: Vec<Result<(), E>>) -> Result<(), E> {
    let mut aborted = None;
    for result in results {
        match result {
            Ok(()) => {}
            Err(e) if e.is_aborted() => aborted = Some(e),
            Err(e) => return Err(e),
        }
    }
    aborted.map_or(Ok(()), Err)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn real_errors_win_over_aborts() {
        let q = InitError::Query {
            message: "ERROR:  x".into(),
            sql: "s".into(),
        };
        assert_eq!(
            first_error(vec![Err(InitError::Aborted), Ok(()), Err(q.clone())]),
            Err(q)
        );
        assert_eq!(first_error::<InitError>(vec![Ok(()), Ok(())]), Ok(()));
        assert_eq!(
            first_error(vec![Ok(()), Err(InitError::Aborted)]),
            Err(InitError::Aborted)
        );
    }
}
