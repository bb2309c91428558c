//! The run's `-j` threads: started, each connecting its clients in order (unless
//! `-C`) and waiting at the [`StartGate`], then running them; and what is said of the
//! clients of a thread lost to a panic. A thread with one client blocks on its socket,
//! a thread with several waits on all of theirs ([`multiplex`]); a test may ask for a
//! multiplexing driver whatever the count ([`Drivers`]). The runner ([`super::run`])
//! and the tests of the clients on the fake server start the threads alike.

use super::client;
use super::cpu_share;
use super::error::RunError;
use super::events;
use super::launch::{self, RunShared, Start, StartGate};
use super::multiplex;
use crate::clock::now_us;
use pgbench_script::prng::Prng;
use pgbench_script::variables::Variables;
use std::sync::Arc;
use std::thread::JoinHandle;

/// How a thread's clients wait for their server.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Drivers {
    /// A lone client blocks on its socket; several share the kernel's best driver
    /// (io_uring, else epoll; `PGBENCH_RS_IO=epoll` forces epoll).
    #[default]
    Chosen,
    /// Every thread's clients on one epoll driver, even a lone one.
    Epoll,
    /// Every thread's clients on one io_uring driver, even a lone one.
    Uring,
}

/// How the threads start.
#[derive(Debug, Clone, Copy, Default)]
pub struct Launch {
    pub drivers: Drivers,
    /// Called with each client's number and socket once it is connected, before the
    /// clients run (a test breaks a socket there as the kernel might).
    pub connected: Option<fn(usize, std::os::fd::RawFd)>,
}

/// Starts the `-j` threads: a thread with one client blocks on its socket, a thread
/// with several waits on all of theirs ([`multiplex`]). Each connects its clients in
/// order (unless `-C`), then waits at the gate; returns when all are ready. A refused
/// thread or a failed connection stops the clients already started and is the run's
/// error, as in pgbench.
pub fn start(
    ctx: &Arc<RunShared>,
    vars: Vec<Variables>,
    rngs: Vec<Prng>,
    how: Launch,
) -> Result<(Vec<JoinHandle<()>>, Arc<StartGate>), RunError> {
    let settings = &ctx.plan.settings;
    let gate = Arc::new(StartGate::default());
    let mut handles = Vec::with_capacity(settings.threads);
    let mut states = vars.into_iter().zip(rngs).enumerate();
    for (thread, count) in launch::deal(&ctx.plan).into_iter().enumerate() {
        let own: Vec<(usize, (Variables, Prng))> = states.by_ref().take(count).collect();
        if own.is_empty() {
            continue;
        }
        let (ctx, waiting) = (Arc::clone(ctx), Arc::clone(&gate));
        let spawned = std::thread::Builder::new()
            .name(format!("thread {thread}"))
            // As pthread's default (8 MiB): evaluation recurses over the expression
            // tree, which a long `1+1+...` chain makes deep. Only touched pages count.
            .stack_size(8 * 1024 * 1024)
            .spawn(move || run_thread(&ctx, thread, own, &waiting, how));
        match spawned {
            Ok(h) => handles.push(h),
            Err(e) => {
                gate.open(Start::Stop);
                return Err(RunError::SpawnThread(crate::sys::strerror(&e)));
            }
        }
    }
    if let Err((client, source)) = gate.wait_ready(settings.clients, || progress_lines(ctx)) {
        gate.open(Start::Stop);
        return Err(RunError::ClientConnect { client, source });
    }
    Ok((handles, gate))
}

/// While the clients connect (a thousand take seconds), the `-P` lines due are
/// printed on time, by the main thread or a connecting one; how long until the next
/// is.
fn progress_lines(ctx: &RunShared) -> std::time::Duration {
    let Some(board) = &ctx.progress else {
        return std::time::Duration::from_secs(3600);
    };
    let now = ctx.control.clock.now_us();
    board.print_due(now, &mut |line| ctx.out.stderr(line));
    std::time::Duration::from_micros(board.due_in(now).clamp(1_000, 100_000) as u64)
}

/// One `-j` thread: connects its clients, waits for the start, runs them.
fn run_thread(
    ctx: &RunShared,
    thread: usize,
    own: Vec<(usize, (Variables, Prng))>,
    gate: &StartGate,
    how: Launch,
) {
    let shared = &ctx.threads[thread];
    // Chosen before the clients connect: an io_uring driver does their I/O.
    let driver = match how.drivers {
        Drivers::Chosen => (own.len() > 1).then(|| multiplex::Driver::new(own.len())),
        Drivers::Epoll => Some(multiplex::Driver::Epoll),
        // A test asks for it only where the kernel gives it (the tests' uring_or_skip).
        Drivers::Uring => multiplex::Driver::uring(own.len()),
    };
    let local_indexes: Vec<usize> = own.iter().map(|(local, _)| *local).collect();
    let mut clients: Vec<client::Client> = own
        .into_iter()
        .map(|(local, (vars, rng))| {
            let number = ctx.plan.first_client() + local;
            let c = client::Client::new((local, number), ctx, shared, vars, rng);
            match &driver {
                None => c,
                Some(d) => c.with_socket_io(d.socket_io()),
            }
        })
        .collect();
    let count = clients.len();
    let mut failed = None;
    if !ctx.plan.settings.reconnect {
        for c in &mut clients {
            if let Err(e) = c.connect_initial() {
                failed = Some((c.id, e));
                break;
            }
            if let Some(m) = &ctx.metrics {
                m.connected(1);
            }
            // The main thread, starved among a thousand connecting threads, may be
            // late with a line due meanwhile.
            progress_lines(ctx);
            if let Some((connected, (fd, _))) = how.connected.zip(c.socket()) {
                connected(c.id, fd);
            }
        }
    }
    let start = match failed {
        None => gate.arrive(count),
        Some((client, e)) => gate.fail(client, e, count),
    };
    if start != Start::Go {
        return;
    }
    let waited = cpu_share::Waited::start();
    // A panic (a bug) must not leave the collector waiting for clients that are gone.
    let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match driver {
        None => clients.into_iter().for_each(client::Client::run),
        Some(d) => d.drive(clients, &ctx.control.clock),
    }));
    waited.finish(&ctx.threads_waited_ns);
    if ran.is_err() {
        report_lost_clients(ctx, thread, &local_indexes);
    }
}

/// The last words of the clients of a thread that panicked, as aborts: the run ends
/// with its report and exit status 2.
fn report_lost_clients(ctx: &RunShared, thread: usize, local_indexes: &[usize]) {
    for &local in local_indexes
        .iter()
        .filter(|&&s| !ctx.control.has_reported(s))
    {
        ctx.control.transaction_ended(local);
        ctx.control.unregister(local);
        let client = ctx.plan.first_client() + local;
        for event in events::lost_client(thread, client, now_us()) {
            let _ = ctx.events.send(event);
        }
        ctx.control.reported(local);
    }
}
