//! `--metrics-listen=[HOST:]PORT`: the run's counters, latency histograms and state
//! served over HTTP at `/metrics` for Prometheus to scrape while the run goes on
//! (docs/metrics.md lists what is served).
//!
//! ```text
//! cli ─ start: bind (before connecting: a port in use stops the run before it starts)
//! collector ─ Live (a lock per batch, on the collector's thread)
//! scrape ─ Snapshot ─ encode (OpenMetrics or Prometheus text)
//! after the report ─ linger (--metrics-linger seconds, or until Ctrl-C)
//!
//! -i: start_load ─ load::LoadLive, fed by the loaders (rows, steps, units) ─ the same
//!     endpoint, its linger after the `done` line
//! ```

mod connection;
pub mod encode;
mod http;
pub mod live;
pub mod load;
mod server;

pub use live::{Live, LivePlan, Phase};
pub use server::{Endpoint, LingerStop};

use std::sync::Arc;
use std::time::Duration;

/// How long the endpoint serves the final values after the report when
/// `--metrics-linger` is not given, seconds: two scrapes at Prometheus's usual 15 s.
pub const DEFAULT_LINGER_S: u64 = 30;

/// `--metrics-listen` and `--metrics-linger`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetricsPlan {
    pub host: String,
    pub port: u16,
    pub linger_s: u64,
}

/// `[HOST:]PORT`: the host is loopback when not given; an IPv6 address is written in
/// brackets (`[::1]:9450`). `None` when it is not of that form.
pub fn parse_listen(v: &str) -> Option<(String, u16)> {
    let (host, port) = match v.rsplit_once(':') {
        None => ("127.0.0.1", v),
        Some((host, port)) => {
            let host = match host.strip_prefix('[') {
                Some(rest) => rest.strip_suffix(']')?,
                None if host.contains(':') => return None,
                None => host,
            };
            (host, port)
        }
    };
    if host.is_empty() || !port.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let port: u16 = port.parse().ok().filter(|&p| p != 0)?;
    Some((host.to_string(), port))
}

/// Starts the endpoint `m` asks for (none without `--metrics-listen`), serving
/// `live`'s values under `labels`. The error is the message to print.
pub fn start(
    m: Option<&MetricsPlan>,
    live: LivePlan,
    labels: encode::Labels,
) -> Result<Option<Endpoint>, String> {
    let Some(m) = m else {
        return Ok(None);
    };
    let live = Arc::new(Live::new(live));
    let linger = Duration::from_secs(m.linger_s);
    // The run's SIGINT and SIGTERM go to its signal thread, never to the server's.
    crate::sys::with_signals_blocked(&[libc::SIGINT, libc::SIGTERM], || {
        Endpoint::start((&m.host, m.port), linger, live, labels).map(Some)
    })
}

/// Starts the endpoint of a load (`-i` under `--metrics-listen`), its state installed
/// for the loaders to feed ([`load`]). The error is the message to print.
pub fn start_load(m: Option<&MetricsPlan>) -> Result<Option<Endpoint>, String> {
    let Some(m) = m else {
        return Ok(None);
    };
    let load = load::install(Arc::default());
    let linger = Duration::from_secs(m.linger_s);
    // The load's SIGINT and SIGTERM go to its cancel handler, never to the server's.
    crate::sys::with_signals_blocked(&[libc::SIGINT, libc::SIGTERM], || {
        Endpoint::start_load((&m.host, m.port), linger, load).map(Some)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn listen_addresses() {
        let ok = |v: &str, host: &str, port| assert_eq!(parse_listen(v), Some((host.into(), port)));
        ok("9450", "127.0.0.1", 9450);
        ok("0.0.0.0:9450", "0.0.0.0", 9450);
        ok("localhost:1", "localhost", 1);
        ok("[::1]:9450", "::1", 9450);
        for bad in [
            "",
            "0",
            "65536",
            ":9450",
            "::1:9450",
            "[::1:9450",
            "host:",
            "x",
            "9450 ",
            "+9",
        ] {
            assert_eq!(parse_listen(bad), None, "{bad:?}");
        }
    }
}
