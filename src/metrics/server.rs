//! The HTTP side of `--metrics-listen`: one thread polling a non-blocking listener and
//! its connections (mio), answering `GET /metrics` with a fresh snapshot for the whole
//! run and then `--metrics-linger` seconds after the report, which Ctrl-C cuts short.
//!
//! Whatever peers do, the endpoint costs the run a bounded amount and never holds it
//! up: at most [`MAX_CONNECTIONS`] connections (fewer when the open-files limit leaves
//! less beside what the run needs), each bounded in bytes and time
//! (`connection.rs`); a newcomer beyond them takes the place of one still silent or
//! already answered; an accept failing for want of files drops such a connection or
//! waits and tries again, it does not end the endpoint; and stopping it wakes the
//! thread, which closes everything at once without waiting for any peer.

use super::connection::{Connection, Progress};
use super::encode::{render, render_load, Format, Labels};
use super::http::{refusal, Status};
use super::live::Live;
use super::load::LoadLive;
use crate::clock::now_us;
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The most connections open at once: Prometheus holds one per target, `curl` one.
pub const MAX_CONNECTIONS: usize = 16;

/// Open files kept for the run beyond its clients' sockets and pgbench's own three:
/// `-l` logs, a driver's ring or epoll per thread, the results files written at the
/// end, `--server-stats`' connection.
const RUN_FILES_MARGIN: u64 = 32;

/// How long an accept that failed for want of resources waits before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(100);

/// Accepts per turn of the loop, so that a flood of connections cannot keep the
/// thread from its other connections or from stopping.
const ACCEPTS_PER_TURN: usize = 64;

/// The longest the thread sleeps without looking at its stop flag, should a wake-up
/// ever be lost.
const MAX_SLEEP: Duration = Duration::from_secs(1);

const LISTENER: Token = Token(0);
const WAKER: Token = Token(1);
const FIRST_CONNECTION: usize = 2;

/// What a scrape shows: the run's live state under its labels (a sweep's next step
/// replaces both), or a load's (`-i`).
enum Shown {
    Run { live: Arc<Live>, labels: Labels },
    Load(Arc<LoadLive>),
}

impl Shown {
    /// The text of a scrape at this instant (the render itself outside the lock).
    fn scrape(shown: &Mutex<Shown>, format: Format) -> String {
        let shown = match &*lock(shown) {
            Shown::Run { live, labels } => Shown::Run {
                live: Arc::clone(live),
                labels: labels.clone(),
            },
            Shown::Load(load) => Shown::Load(Arc::clone(load)),
        };
        match shown {
            Shown::Run { live, labels } => render(&labels, live.snapshot(now_us()), format),
            Shown::Load(load) => render_load(load.snapshot(), format),
        }
    }
}

/// A listening endpoint.
pub struct Endpoint {
    shown: Arc<Mutex<Shown>>,
    stop: Arc<AtomicBool>,
    waker: Arc<Waker>,
    thread: Option<JoinHandle<()>>,
    linger: Duration,
    lingering: Arc<LingerStop>,
}

impl Endpoint {
    /// Binds `host:port` now (so that a port in use is an error before the run) and
    /// serves from a thread. The error is the message to print.
    pub fn start(
        addr: (&str, u16),
        linger: Duration,
        live: Arc<Live>,
        labels: Labels,
    ) -> Result<Endpoint, String> {
        let clients = live.plan().clients;
        Endpoint::serve(addr, linger, Shown::Run { live, labels }, clients)
    }

    /// [`Endpoint::start`] for a load (`-i`): scrapes show `load`.
    pub fn start_load(
        addr: (&str, u16),
        linger: Duration,
        load: Arc<LoadLive>,
    ) -> Result<Endpoint, String> {
        // A load's connections are its -j, well within the margin kept for the run.
        Endpoint::serve(addr, linger, Shown::Load(load), 0)
    }

    fn serve(
        (host, port): (&str, u16),
        linger: Duration,
        shown_now: Shown,
        clients: usize,
    ) -> Result<Endpoint, String> {
        let shown = match host.contains(':') {
            true => format!("[{host}]:{port}"),
            false => format!("{host}:{port}"),
        };
        let listener = std::net::TcpListener::bind((host, port))
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
            .map_err(|e| {
                let reason = crate::sys::strerror(&e);
                format!("could not listen for metrics on {shown}: {reason}")
            })?;
        let cannot = |e: std::io::Error| format!("could not start the metrics endpoint: {e}");
        let poll = Poll::new().map_err(cannot)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKER).map_err(cannot)?);
        let mut listener = TcpListener::from_std(listener);
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)
            .map_err(cannot)?;
        let cap = connection_cap(crate::sys::open_files(), clients);
        let stop = Arc::new(AtomicBool::new(false));
        let shown = Arc::new(Mutex::new(shown_now));
        let server = Server {
            poll,
            listener,
            slots: (0..cap).map(|_| None).collect(),
            accept_pending: false,
            accept_after: None,
            shown: Arc::clone(&shown),
            stop: Arc::clone(&stop),
        };
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || server.run())
            .map_err(cannot)?;
        Ok(Endpoint {
            shown,
            stop,
            waker,
            thread: Some(thread),
            linger,
            lingering: Arc::default(),
        })
    }

    /// What the collector writes to (none for a load's endpoint).
    pub fn live(&self) -> Option<Arc<Live>> {
        match &*lock(&self.shown) {
            Shown::Run { live, .. } => Some(Arc::clone(live)),
            Shown::Load(_) => None,
        }
    }

    /// From now on, scrapes show `live` under `labels` (a sweep's next step).
    pub fn show(&self, live: Arc<Live>, labels: Labels) {
        *lock(&self.shown) = Shown::Run { live, labels };
    }

    /// What ends the linger on SIGINT or SIGTERM: for the caller to attach to the
    /// process's signal handling from the report on.
    pub fn linger_stop(&self) -> Arc<LingerStop> {
        Arc::clone(&self.lingering)
    }

    /// Keeps serving the final values for the linger time, or until a signal reaches
    /// [`Endpoint::linger_stop`] (one that came before the linger began included);
    /// then stops.
    pub fn linger(mut self) {
        let deadline = Instant::now() + self.linger;
        let lingering = Arc::clone(&self.lingering);
        let mut state = lingering.lock();
        if *state == Linger::Idle {
            *state = Linger::Waiting;
        }
        while *state == Linger::Waiting {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = lingering
                .wake
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *state = Linger::Ended;
        drop(state);
        self.stop();
    }

    /// Closes the listener and every connection. The thread never waits on a peer,
    /// so this returns as soon as it has seen the stop flag.
    fn stop(&mut self) {
        self.stop.store(true, Ordering::Release);
        let _ = self.waker.wake();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        self.stop();
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Linger {
    /// Not begun, and no signal yet.
    #[default]
    Idle,
    Waiting,
    /// Over, or cut short before it began.
    Ended,
}

/// An endpoint's linger after the report, and what SIGINT and SIGTERM do to it while
/// this is attached: end it.
#[derive(Default)]
pub struct LingerStop {
    state: Mutex<Linger>,
    wake: Condvar,
}

impl LingerStop {
    fn lock(&self) -> std::sync::MutexGuard<'_, Linger> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl crate::signals::OnSignal for LingerStop {
    /// Ends the linger under way, or the one to come: a signal between this handler's
    /// attachment and the linger's start is not lost.
    fn signal(&self, _: i32) -> crate::signals::Reaction {
        *self.lock() = Linger::Ended;
        self.wake.notify_all();
        crate::signals::Reaction::Handled
    }
}

/// How many connections the endpoint may hold, given the open files (`(in use,
/// soft limit)`, when known) and the run's clients: what the limit leaves beside the
/// files open now and those the run will open (one socket per client, pgbench's own
/// three, [`RUN_FILES_MARGIN`]), between 1 and [`MAX_CONNECTIONS`]. A run whose limit
/// is that tight gets one scraper at a time, never its own files taken.
fn connection_cap(open_files: Option<(u64, u64)>, clients: usize) -> usize {
    let Some((in_use, limit)) = open_files else {
        return MAX_CONNECTIONS;
    };
    let run = (clients as u64).saturating_add(3 + RUN_FILES_MARGIN);
    let spare = limit.saturating_sub(in_use).saturating_sub(run);
    spare.clamp(1, MAX_CONNECTIONS as u64) as usize
}

/// The endpoint's thread: its poll, listener and connections.
struct Server {
    poll: Poll,
    listener: TcpListener,
    /// The connections, token `FIRST_CONNECTION + index`; as many slots as allowed.
    slots: Vec<Option<Connection<TcpStream>>>,
    /// The listener may have connections waiting (its readiness is edge-triggered).
    accept_pending: bool,
    /// Not before then: the last accept failed for want of files or memory.
    accept_after: Option<Instant>,
    shown: Arc<Mutex<Shown>>,
    stop: Arc<AtomicBool>,
}

fn lock(shown: &Mutex<Shown>) -> std::sync::MutexGuard<'_, Shown> {
    // Replaced whole under the lock: a panic cannot leave it half-written.
    shown.lock().unwrap_or_else(|e| e.into_inner())
}

impl Server {
    fn run(mut self) {
        let mut events = Events::with_capacity(64);
        while !self.stop.load(Ordering::Acquire) {
            let timeout = self.sleep(Instant::now());
            if let Err(e) = self.poll.poll(&mut events, Some(timeout)) {
                if e.kind() != ErrorKind::Interrupted {
                    // Not expected of epoll_wait; a pause keeps a repeated failure
                    // from spinning while the flag is watched.
                    std::thread::sleep(ACCEPT_BACKOFF);
                }
                continue;
            }
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept_pending = true,
                    WAKER => {}
                    Token(t) => self.advance(t - FIRST_CONNECTION, Instant::now()),
                }
            }
            let now = Instant::now();
            if self.accept_pending && self.accept_after.is_none_or(|t| now >= t) {
                self.accept_after = None;
                self.accept(now);
            }
            self.expire(Instant::now());
        }
    }

    /// How long to wait for events: until the next deadline or accept, at most
    /// [`MAX_SLEEP`].
    fn sleep(&self, now: Instant) -> Duration {
        let accept = match self.accept_pending {
            true => Some(self.accept_after.unwrap_or(now)),
            false => None,
        };
        let deadlines = self.slots.iter().flatten().map(Connection::deadline);
        let next = deadlines.chain(accept).min();
        next.map_or(MAX_SLEEP, |t| {
            t.saturating_duration_since(now).min(MAX_SLEEP)
        })
    }

    /// Moves the connection in `slot` on as its socket allows; closes it when done.
    fn advance(&mut self, slot: usize, now: Instant) {
        let Some(Some(conn)) = self.slots.get_mut(slot) else {
            return;
        };
        let shown = &self.shown;
        let mut metrics = |format| Shown::scrape(shown, format);
        if conn.advance(now, &mut metrics) == Progress::Done {
            self.close(slot);
        }
    }

    fn close(&mut self, slot: usize) {
        if let Some(mut conn) = self.slots[slot].take() {
            let _ = self.poll.registry().deregister(conn.stream());
        }
    }

    /// Closes the connections past their deadline.
    fn expire(&mut self, now: Instant) {
        for slot in 0..self.slots.len() {
            if self.slots[slot]
                .as_ref()
                .is_some_and(|c| now >= c.deadline())
            {
                self.close(slot);
            }
        }
    }

    /// Takes the connections waiting on the listener (up to [`ACCEPTS_PER_TURN`]).
    fn accept(&mut self, now: Instant) {
        for _ in 0..ACCEPTS_PER_TURN {
            match self.listener.accept() {
                Ok((stream, _)) => self.admit(stream, now),
                Err(e) => match e.kind() {
                    ErrorKind::WouldBlock => {
                        self.accept_pending = false;
                        return;
                    }
                    // A peer gone before its accept, a signal: on to the next.
                    ErrorKind::ConnectionAborted | ErrorKind::Interrupted => {}
                    // Out of files or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM): the
                    // connections waiting stay queued. One of ours makes way if one
                    // may; else, as for any other failure, try again a little later.
                    // The kernel takes the file before it looks at the queue, so an
                    // accept with nobody waiting fails so too: only a connection
                    // really waiting may make one of ours go (else the one just
                    // accepted made way for nobody).
                    _ if wants_resources(&e) && !self.waiting() => {
                        self.accept_pending = false;
                        return;
                    }
                    _ if wants_resources(&e) && self.evict_slot().is_some() => {}
                    _ => {
                        self.accept_after = Some(now + ACCEPT_BACKOFF);
                        return;
                    }
                },
            }
        }
    }

    /// Whether a connection waits on the listener.
    fn waiting(&self) -> bool {
        crate::sys::connection_waiting(std::os::fd::AsRawFd::as_raw_fd(&self.listener))
    }

    /// A new connection into a free slot, one made free, or answered 503 at once.
    fn admit(&mut self, mut stream: TcpStream, now: Instant) {
        let free = match self.slots.iter().position(Option::is_none) {
            Some(slot) => Some(slot),
            None => self.evict_slot(),
        };
        let Some(slot) = free else {
            // Every slot is busy answering: best effort, the socket is empty.
            let _ = stream.write(&refusal(Status::Unavailable));
            return;
        };
        let token = Token(FIRST_CONNECTION + slot);
        let interest = Interest::READABLE | Interest::WRITABLE;
        // Refused by epoll (out of memory): the connection is closed.
        if self
            .poll
            .registry()
            .register(&mut stream, token, interest)
            .is_ok()
        {
            self.slots[slot] = Some(Connection::new(stream, now));
        }
    }

    /// Closes the connection that makes way most readily (see
    /// [`Connection::eviction_rank`]); its slot, or `None` when none may.
    fn evict_slot(&mut self) -> Option<usize> {
        let (slot, _) = self
            .slots
            .iter()
            .enumerate()
            .filter_map(|(i, c)| Some((i, c.as_ref()?.eviction_rank()?)))
            .min_by_key(|&(_, rank)| rank)?;
        self.close(slot);
        Some(slot)
    }
}

/// Whether an accept failed for want of files or memory, which closing a connection
/// of ours gives back.
fn wants_resources(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::LivePlan;
    use std::io::{BufRead, BufReader, Read};
    use std::process::{Command, Stdio};

    #[test]
    fn connections_leave_the_run_its_files() {
        // Plenty of files: the cap.
        assert_eq!(connection_cap(Some((10, 1024)), 64), MAX_CONNECTIONS);
        assert_eq!(connection_cap(Some((10, u64::MAX)), 64), MAX_CONNECTIONS);
        // What is left beside the run's clients, its three and the margin.
        let limit = 10 + 2 + 3 + RUN_FILES_MARGIN + 5;
        assert_eq!(connection_cap(Some((10, limit)), 2), 5);
        // Nothing left: still one scraper at a time.
        assert_eq!(connection_cap(Some((10, 40)), 2), 1);
        assert_eq!(connection_cap(Some((1000, 1024)), 1000), 1);
        assert_eq!(connection_cap(None, 1000), MAX_CONNECTIONS);
    }

    /// A signal between the handler's attachment and the linger: the linger does
    /// not begin.
    #[test]
    fn a_signal_before_the_linger_ends_it_before_it_begins() {
        use crate::signals::{OnSignal, Reaction};
        let endpoint = Endpoint::start(
            ("127.0.0.1", 0),
            Duration::from_secs(600),
            Arc::new(Live::new(one_client())),
            one_script(),
        )
        .unwrap();
        let stop = endpoint.linger_stop();
        assert_eq!(stop.signal(libc::SIGINT), Reaction::Handled);
        let started = Instant::now();
        endpoint.linger();
        assert!(started.elapsed() < Duration::from_secs(300));
    }

    /// Set in the child process of [`an_accept_out_of_files_makes_way_or_waits`]: the
    /// endpoint's port.
    const CHILD: &str = "PGBENCH_RS_TEST_METRICS_EMFILE_PORT";

    fn one_client() -> LivePlan {
        LivePlan {
            scripts: vec!["a".into()],
            weights: vec![1],
            clients: 1,
            throttled: false,
            latency_limit_us: None,
            limit: pgbench_results::run::Limit::Transactions(1),
            interval_us: 1_000_000,
            reconnecting: false,
        }
    }

    fn one_script() -> Labels {
        Labels {
            worker: None,
            step: None,
            scripts: vec![("a".into(), 1)],
            scenarios: Vec::new(),
        }
    }

    /// The status of `GET /metrics` on `port`, 0 when nothing answers within 30 s.
    fn scrape(port: u16) -> u16 {
        let Ok(mut s) = std::net::TcpStream::connect(("127.0.0.1", port)) else {
            return 0;
        };
        s.set_read_timeout(Some(Duration::from_secs(30))).unwrap();
        let _ = s.write_all(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
        let mut text = String::new();
        let _ = s.read_to_string(&mut text);
        text.get(9..12).and_then(|c| c.parse().ok()).unwrap_or(0)
    }

    /// The child's side: an endpoint on the port given; on "fill", files opened until
    /// the limit refuses more; on "free", closed again.
    fn child(port: u16) {
        let live = Arc::new(Live::new(one_client()));
        let endpoint = Endpoint::start(("127.0.0.1", port), Duration::ZERO, live, one_script());
        let _endpoint = endpoint.unwrap();
        let mut hoard = Vec::new();
        println!("ready");
        for line in std::io::stdin().lines() {
            match line.unwrap().as_str() {
                "fill" => {
                    while let Ok(file) = std::fs::File::open("/dev/null") {
                        hoard.push(file);
                    }
                    println!("full");
                }
                "free" => {
                    hoard.clear();
                    println!("freed");
                }
                _ => break,
            }
        }
    }

    /// #38: at the open-files limit, an accept takes the place of a connection still
    /// silent, or (none left) waits for files and is served once there are some; the
    /// endpoint goes on. In a child process under `prlimit --nofile`, the limit being
    /// the whole process's.
    #[test]
    fn an_accept_out_of_files_makes_way_or_waits() {
        if let Ok(port) = std::env::var(CHILD) {
            return child(port.parse().unwrap());
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .unwrap()
            .port();
        let name = "metrics::server::tests::an_accept_out_of_files_makes_way_or_waits";
        let mut child = Command::new("prlimit")
            .args(["--nofile=64", "--"])
            .arg(std::env::current_exe().unwrap())
            .args(["--exact", name, "--nocapture", "--test-threads=1"])
            .env(CHILD, port.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("prlimit (util-linux)");
        let mut tell = child.stdin.take().unwrap();
        let mut said = BufReader::new(child.stdout.take().unwrap()).lines();
        // Tells the child `word` (none at first) and waits for its answer, which the
        // test harness prints after the test's name on the same line.
        let mut step = |word: &str, answer: &str| {
            if !word.is_empty() {
                writeln!(tell, "{word}").unwrap();
            }
            while !said
                .next()
                .expect("the child's answer")
                .unwrap()
                .ends_with(answer)
            {}
        };
        step("", "ready");
        let idle: Vec<_> = (0..4)
            .map(|_| std::net::TcpStream::connect(("127.0.0.1", port)).unwrap())
            .collect();
        // Accepted in order: once this is answered, the idle ones are the endpoint's.
        assert_eq!(scrape(port), 200);
        step("fill", "full");
        // Not a file left: each accept makes an idle connection make way.
        assert_eq!(scrape(port), 200);
        assert_eq!(scrape(port), 200);
        drop(idle);
        step("fill", "full");
        // Nothing to make way: the connection waits in the queue until files are free.
        let mut waiting = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        waiting.write_all(b"GET /metrics HTTP/1.1\r\n\r\n").unwrap();
        step("free", "freed");
        waiting
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let mut text = String::new();
        let _ = waiting.read_to_string(&mut text);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text:?}");
        assert_eq!(scrape(port), 200);
        step("end", "ok");
        assert!(child.wait().unwrap().success());
    }
}
