//! SIGINT and SIGTERM, taken over once per process by the command line ([`install`],
//! before any thread starts) and handed to whatever is attached now: a run, which
//! stops and keeps its results (`bench::RunStop`); a load, which cancels its
//! statements (`init::interrupt`); the metrics endpoint's linger, which ends. The
//! innermost attachment gets the signal; with nothing attached the process ends as
//! the signal would (a handler that asks the process to end cleans up first). A signal the process was
//! started with ignored stays ignored ([`crate::sys::on_signals`]).
//!
//! A run never takes over a signal itself: whoever runs it attaches what should
//! happen, for as long as it should, so a process can run one run after another (a
//! sweep's steps) and a signal always reaches the one under way.

use std::sync::{Arc, Mutex, MutexGuard};

/// What an attached handler asks of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaction {
    /// It took care of the signal.
    Handled,
    /// The process is to end at once, with the signal's status.
    Exit,
}

/// Something that acts on SIGINT and SIGTERM while it is attached.
pub trait OnSignal: Send + Sync {
    fn signal(&self, sig: i32) -> Reaction;
}

/// The handlers attached, innermost last, each with its attachment's number.
type Stack = Vec<(u64, Arc<dyn OnSignal>)>;

/// The process's handling of SIGINT and SIGTERM: a stack of attached handlers.
#[derive(Clone, Default)]
pub struct Signals {
    attached: Arc<Mutex<Stack>>,
    next_id: Arc<std::sync::atomic::AtomicU64>,
}

/// Takes over SIGINT and SIGTERM for the rest of the process: a thread of its own
/// waits for them and delivers each to what is attached. Call before any other thread
/// starts (the signals are blocked in every thread started after it). Where no thread
/// can be made for it, the signals keep their default action and the error is
/// returned.
pub fn install() -> std::io::Result<Signals> {
    let signals = Signals::default();
    let delivered = signals.clone();
    crate::sys::on_signals(&[libc::SIGINT, libc::SIGTERM], move |sig| {
        delivered.deliver(sig)
    })?;
    Ok(signals)
}

/// An attachment, undone when dropped.
#[must_use = "the handler is detached when this is dropped"]
pub struct Attached {
    signals: Signals,
    id: u64,
}

impl Drop for Attached {
    fn drop(&mut self) {
        self.signals.lock().retain(|(id, _)| *id != self.id);
    }
}

impl Signals {
    /// Handling with no signal thread: signals come only through [`Signals::deliver`]
    /// (a test, or a program that embeds runs and has its own signal handling).
    pub fn detached() -> Signals {
        Signals::default()
    }

    fn lock(&self) -> MutexGuard<'_, Stack> {
        self.attached.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `handler` gets the signals until the returned attachment is dropped (a handler
    /// attached after it takes them over meanwhile).
    pub fn attach(&self, handler: Arc<dyn OnSignal>) -> Attached {
        let id = self
            .next_id
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.lock().push((id, handler));
        Attached {
            signals: self.clone(),
            id,
        }
    }

    /// What the signal thread does with a signal: the innermost handler's reaction,
    /// or with none attached, the signal's own (the process ends).
    pub fn deliver(&self, sig: i32) {
        let current = self.lock().last().map(|(_, h)| Arc::clone(h));
        let reaction = current.map_or(Reaction::Exit, |h| h.signal(sig));
        if reaction == Reaction::Exit {
            std::process::exit(crate::diagnostic::ExitStatus::Signal(sig).code())
        }
    }
}

/// SIGINT or SIGTERM by name.
pub fn name(sig: i32) -> String {
    match sig {
        libc::SIGINT => "SIGINT".to_string(),
        libc::SIGTERM => "SIGTERM".to_string(),
        other => format!("signal {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicI32, Ordering};

    struct Seen(AtomicI32);

    impl OnSignal for Seen {
        fn signal(&self, sig: i32) -> Reaction {
            self.0.store(sig, Ordering::SeqCst);
            Reaction::Handled
        }
    }

    #[test]
    fn the_innermost_attached_handler_gets_the_signal_until_it_is_detached() {
        let signals = Signals::detached();
        let (outer, inner) = (
            Arc::new(Seen(AtomicI32::new(0))),
            Arc::new(Seen(AtomicI32::new(0))),
        );
        let _outer = signals.attach(outer.clone());
        {
            let _inner = signals.attach(inner.clone());
            signals.deliver(libc::SIGINT);
            assert_eq!(inner.0.load(Ordering::SeqCst), libc::SIGINT);
            assert_eq!(outer.0.load(Ordering::SeqCst), 0);
        }
        signals.deliver(libc::SIGTERM);
        assert_eq!(outer.0.load(Ordering::SeqCst), libc::SIGTERM);
        assert_eq!(inner.0.load(Ordering::SeqCst), libc::SIGINT);
    }
}
