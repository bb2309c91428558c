//! The HTTP side of `--metrics-listen`: `tiny_http` (a small blocking server) on a
//! thread of its own, answering `GET /metrics` with a fresh snapshot, for the whole run
//! and then `--metrics-linger` seconds after the report, which Ctrl-C cuts short.

use super::encode::{render, Format, Labels};
use super::live::Live;
use crate::bench::clock::now_us;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A listening endpoint.
pub struct Endpoint {
    server: Arc<tiny_http::Server>,
    live: Arc<Live>,
    thread: Option<JoinHandle<()>>,
    linger: Duration,
}

impl Endpoint {
    /// Binds `host:port` now (so that a port in use is an error before the run) and
    /// serves from a thread. The error is the message to print.
    pub fn start(
        (host, port): (&str, u16),
        linger: Duration,
        live: Arc<Live>,
        labels: Labels,
    ) -> Result<Endpoint, String> {
        let shown = match host.contains(':') {
            true => format!("[{host}]:{port}"),
            false => format!("{host}:{port}"),
        };
        let server = tiny_http::Server::http((host, port)).map_err(|e| {
            let reason = match e.downcast_ref::<std::io::Error>() {
                Some(io) => crate::sys::strerror(io),
                None => e.to_string(),
            };
            format!("could not listen for metrics on {shown}: {reason}")
        })?;
        let server = Arc::new(server);
        let serving = Arc::clone(&server);
        let reading = Arc::clone(&live);
        let thread = std::thread::Builder::new()
            .name("metrics".into())
            .spawn(move || serve(&serving, &reading, &labels))
            .map_err(|e| format!("could not start the metrics endpoint: {e}"))?;
        Ok(Endpoint {
            server,
            live,
            thread: Some(thread),
            linger,
        })
    }

    /// What the collector writes to.
    pub fn live(&self) -> Arc<Live> {
        Arc::clone(&self.live)
    }

    /// Keeps serving the final values for the linger time, or until SIGINT or
    /// SIGTERM ([`end_linger`]); then stops.
    pub fn linger(mut self) {
        let deadline = Instant::now() + self.linger;
        let mut state = LINGER.0.lock().unwrap_or_else(|e| e.into_inner());
        *state = Linger::Waiting;
        while *state == Linger::Waiting {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            state = LINGER
                .1
                .wait_timeout(state, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        *state = Linger::Idle;
        drop(state);
        self.stop();
    }

    fn stop(&mut self) {
        self.server.unblock();
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

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Linger {
    Idle,
    Waiting,
    Ended,
}

/// The one linger of the process (there is one run), and what wakes it.
static LINGER: (Mutex<Linger>, Condvar) = (Mutex::new(Linger::Idle), Condvar::new());

/// What SIGINT and SIGTERM do while the endpoint lingers after the report: end the
/// linger.
pub struct LingerStop;

impl crate::signals::OnSignal for LingerStop {
    fn signal(&self, _: i32) -> crate::signals::Reaction {
        end_linger();
        crate::signals::Reaction::Handled
    }
}

/// From the signal thread: ends a linger under way; returns whether there was one
/// (the signal then has done its job).
pub fn end_linger() -> bool {
    let mut state = LINGER.0.lock().unwrap_or_else(|e| e.into_inner());
    if *state != Linger::Waiting {
        return false;
    }
    *state = Linger::Ended;
    LINGER.1.notify_all();
    true
}

/// Answers requests until the server is unblocked.
fn serve(server: &tiny_http::Server, live: &Live, labels: &Labels) {
    for request in server.incoming_requests() {
        let response = answer(&request, live, labels);
        // A scraper that went away is its own business.
        let _ = request.respond(response);
    }
}

fn answer(
    request: &tiny_http::Request,
    live: &Live,
    labels: &Labels,
) -> tiny_http::Response<std::io::Cursor<Vec<u8>>> {
    use tiny_http::{Method, Response};
    let path = request.url().split('?').next().unwrap_or("");
    if path != "/metrics" {
        return Response::from_string("Not Found: the metrics are at /metrics\n")
            .with_status_code(404);
    }
    if !matches!(request.method(), Method::Get | Method::Head) {
        return Response::from_string("Method Not Allowed\n").with_status_code(405);
    }
    let accept = request
        .headers()
        .iter()
        .find(|h| h.field.equiv("Accept"))
        .map(|h| h.value.as_str());
    let format = Format::accepted(accept);
    let body = render(labels, live.snapshot(now_us()), format);
    let content_type = tiny_http::Header::from_bytes("Content-Type", format.content_type())
        .unwrap_or_else(|()| unreachable!("a valid header"));
    Response::from_string(body).with_header(content_type)
}
