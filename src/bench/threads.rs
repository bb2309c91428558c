//! The run's `-j` threads: laid on OS threads (at most one per CPU, [`os_threads`]),
//! each OS thread connecting its clients in order (unless `-C`) and waiting at the
//! [`StartGate`], then running them; and what is said of the clients of a thread lost
//! to a panic. An OS thread with one client blocks on its socket, one with several
//! waits on all of theirs ([`multiplex`]); a test may ask for a multiplexing driver
//! whatever the count ([`Drivers`]). The runner ([`super::run`])
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
    /// How many OS threads run the `-j` threads ([`os_threads`]); `None`: one each.
    pub os_threads: Option<usize>,
    /// Called with each client's number and socket once it is connected, before the
    /// clients run (a test breaks a socket there as the kernel might).
    pub connected: Option<fn(usize, std::os::fd::RawFd)>,
}

/// How many OS threads run a plan's `-j` threads, on a machine giving the process
/// `cpus` CPUs: `--os-threads` if given, else one per CPU (never more than `-j`).
///
/// A `-j` thread is pgbench's unit of random states, `-R` schedule and log file
/// ([`launch::ThreadShared`]), and those stay one per `-j` thread whatever runs them:
/// the same clients draw the same numbers. Running more OS threads than CPUs only adds
/// their cost: at the guides' `-c 256 -j 256` on 2 CPUs a sleeping thread per client
/// costs a wake-up and a context switch per statement, where 2 threads waiting on 128
/// sockets each keep running while any has a reply (half the client CPU per
/// transaction, benches/README.md). One OS thread per `-j` thread stays where a client
/// blocks its thread for long: `\shell` and `\setshell` wait for their command, `-C`
/// and `--reconnect` for each new connection, which would hold up the other clients.
pub fn os_threads(plan: &crate::bench::plan::BenchPlan, cpus: usize) -> usize {
    let threads = plan.settings.threads.max(1);
    if let Some(n) = plan.os_threads {
        return n.clamp(1, threads);
    }
    let blocking = plan.settings.reconnect
        || plan.availability.is_some()
        || plan.scripts.iter().any(|s| {
            s.script.commands.iter().any(|c| {
                matches!(
                    c.kind,
                    pgbench_script::ast::CommandKind::Meta(
                        pgbench_script::ast::MetaCommand::Shell { .. }
                            | pgbench_script::ast::MetaCommand::SetShell { .. }
                    )
                )
            })
        });
    if blocking {
        threads
    } else {
        threads.min(cpus.max(1))
    }
}

/// The CPUs this process may run on (its affinity and cgroup quota), 1 if unknown.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, usize::from)
}

/// The clients of one `-j` thread: its number and each client's local index, variables
/// and random state.
type ThreadClients = (usize, Vec<(usize, (Variables, Prng))>);

/// Starts the `-j` threads on OS threads ([`Launch::os_threads`]; consecutive `-j`
/// threads share one, dealt as pgbench deals clients to threads): an OS thread with
/// one client blocks on its socket, one with several waits on all of theirs
/// ([`multiplex`]). Each connects its clients in order (unless `-C`), then waits at
/// the gate; returns when all are ready. A refused thread or a failed connection stops
/// the clients already started and is the run's error, as in pgbench.
pub fn start(
    ctx: &Arc<RunShared>,
    vars: Vec<Variables>,
    rngs: Vec<Prng>,
    how: Launch,
) -> Result<(Vec<JoinHandle<()>>, Arc<StartGate>), RunError> {
    let settings = &ctx.plan.settings;
    let gate = Arc::new(StartGate::default());
    let mut states = vars.into_iter().zip(rngs).enumerate();
    let threads: Vec<ThreadClients> = launch::deal(&ctx.plan)
        .into_iter()
        .enumerate()
        .map(|(thread, count)| (thread, states.by_ref().take(count).collect()))
        .filter(|(_, own): &ThreadClients| !own.is_empty())
        .collect();
    let os = how
        .os_threads
        .unwrap_or(threads.len())
        .clamp(1, threads.len().max(1));
    let mut threads = threads.into_iter();
    let mut handles = Vec::with_capacity(os);
    for count in launch::deal_clients(threads.len(), os) {
        let own: Vec<ThreadClients> = threads.by_ref().take(count).collect();
        let name = match (own.first(), own.last()) {
            (Some((a, _)), Some((b, _))) if a != b => format!("threads {a}-{b}"),
            (Some((a, _)), _) => format!("thread {a}"),
            _ => continue,
        };
        let (ctx, waiting) = (Arc::clone(ctx), Arc::clone(&gate));
        let spawned = std::thread::Builder::new()
            .name(name)
            // As pthread's default (8 MiB): evaluation recurses over the expression
            // tree, which a long `1+1+...` chain makes deep. Only touched pages count.
            .stack_size(8 * 1024 * 1024)
            .spawn(move || run_thread(&ctx, own, &waiting, how));
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

/// One OS thread: connects the clients of its `-j` threads, waits for the start,
/// runs them.
fn run_thread(ctx: &RunShared, own: Vec<ThreadClients>, gate: &StartGate, how: Launch) {
    let count: usize = own.iter().map(|(_, clients)| clients.len()).sum();
    // Chosen before the clients connect: an io_uring driver does their I/O.
    let driver = match how.drivers {
        Drivers::Chosen => (count > 1).then(|| multiplex::Driver::new(count)),
        Drivers::Epoll => Some(multiplex::Driver::Epoll),
        // A test asks for it only where the kernel gives it (the tests' uring_or_skip).
        Drivers::Uring => multiplex::Driver::uring(count),
    };
    let lost: Vec<(usize, Vec<usize>)> = own
        .iter()
        .map(|(thread, clients)| (*thread, clients.iter().map(|(local, _)| *local).collect()))
        .collect();
    let mut clients: Vec<client::Client> = own
        .into_iter()
        .flat_map(|(thread, clients)| {
            let shared = &ctx.threads[thread];
            clients.into_iter().map(move |c| (shared, c))
        })
        .map(|(shared, (local, (vars, rng)))| {
            let number = ctx.plan.first_client() + local;
            let c = client::Client::new((local, number), ctx, shared, vars, rng);
            match &driver {
                None => c,
                Some(d) => c.with_socket_io(d.socket_io()),
            }
        })
        .collect();
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
        for (thread, local_indexes) in &lost {
            report_lost_clients(ctx, *thread, local_indexes);
        }
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
