//! Replication lag of the standbys attached to the run's server, from
//! `pg_stat_replication` once a second: `write_lag`, `flush_lag` and `replay_lag` (in
//! seconds) and the bytes of WAL the standby has yet to replay
//! (`pg_current_wal_lsn() - replay_lsn`).

use serde::{Deserialize, Serialize};

/// One standby as one second's read saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StandbySample {
    /// The WAL sender's `pid` (a standby's identity for the run).
    pub pid: i64,
    pub application_name: String,
    pub state: Option<String>,
    pub write_lag_s: Option<f64>,
    pub flush_lag_s: Option<f64>,
    pub replay_lag_s: Option<f64>,
    /// `pg_wal_lsn_diff(pg_current_wal_lsn(), replay_lsn)`.
    pub replay_lag_bytes: Option<i64>,
}

/// One standby over the window.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Standby {
    pub pid: i64,
    pub application_name: String,
    /// Its `state` at the last read (`streaming`, `catchup`, ...).
    pub state: Option<String>,
    /// The seconds it was seen in.
    pub samples: i64,
    pub max_write_lag_s: Option<f64>,
    pub max_flush_lag_s: Option<f64>,
    pub max_replay_lag_s: Option<f64>,
    pub max_replay_lag_bytes: Option<i64>,
    pub mean_replay_lag_bytes: Option<f64>,
}

fn max_f(a: Option<f64>, b: Option<f64>) -> Option<f64> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// The window's standbys from its seconds' samples, in the order first seen.
pub fn summarize<'a>(seconds: impl IntoIterator<Item = &'a [StandbySample]>) -> Vec<Standby> {
    let mut summary = Summary::default();
    for second in seconds {
        summary.add(second);
    }
    summary.finish()
}

/// [`summarize`] one second at a time (the sampler's series keeps only some of them).
#[derive(Debug, Clone, Default)]
pub struct Summary {
    /// Each standby, with the sum and count of its `replay_lag_bytes`.
    standbys: Vec<(Standby, i64, i64)>,
}

impl Summary {
    /// One second's read.
    pub fn add(&mut self, second: &[StandbySample]) {
        for s in second {
            let i = match self.standbys.iter().position(|(o, ..)| o.pid == s.pid) {
                Some(i) => i,
                None => {
                    self.standbys.push((
                        Standby {
                            pid: s.pid,
                            application_name: s.application_name.clone(),
                            state: None,
                            samples: 0,
                            max_write_lag_s: None,
                            max_flush_lag_s: None,
                            max_replay_lag_s: None,
                            max_replay_lag_bytes: None,
                            mean_replay_lag_bytes: None,
                        },
                        0,
                        0,
                    ));
                    self.standbys.len() - 1
                }
            };
            let (o, sum, n) = &mut self.standbys[i];
            o.state.clone_from(&s.state);
            o.samples += 1;
            o.max_write_lag_s = max_f(o.max_write_lag_s, s.write_lag_s);
            o.max_flush_lag_s = max_f(o.max_flush_lag_s, s.flush_lag_s);
            o.max_replay_lag_s = max_f(o.max_replay_lag_s, s.replay_lag_s);
            if let Some(b) = s.replay_lag_bytes {
                o.max_replay_lag_bytes = Some(o.max_replay_lag_bytes.map_or(b, |m| m.max(b)));
                *sum += b;
                *n += 1;
            }
        }
    }

    /// The standbys seen, in the order first seen.
    pub fn finish(self) -> Vec<Standby> {
        self.standbys
            .into_iter()
            .map(|(mut o, sum, n)| {
                o.mean_replay_lag_bytes = (n > 0).then(|| sum as f64 / n as f64);
                o
            })
            .collect()
    }
}

/// The `server:` block's lines of the standbys.
pub fn render(standbys: &[Standby]) -> String {
    if standbys.is_empty() {
        return "  standbys: none attached\n".into();
    }
    let secs = |v: Option<f64>| v.map_or_else(|| "n/a".to_string(), |v| format!("{v:.3} s"));
    let bytes = |v: Option<i64>| v.map_or_else(|| "n/a".to_string(), |v| v.to_string());
    standbys
        .iter()
        .map(|s| {
            format!(
                "  standby {} ({}): replay lag max {}, WAL behind max {} bytes (mean {})\n",
                s.application_name,
                s.state.as_deref().unwrap_or("unknown"),
                secs(s.max_replay_lag_s),
                bytes(s.max_replay_lag_bytes),
                s.mean_replay_lag_bytes
                    .map_or_else(|| "n/a".to_string(), |v| format!("{v:.0}"))
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(pid: i64, replay: Option<f64>, bytes: Option<i64>) -> StandbySample {
        StandbySample {
            pid,
            application_name: format!("s{pid}"),
            state: Some("streaming".into()),
            write_lag_s: None,
            flush_lag_s: replay,
            replay_lag_s: replay,
            replay_lag_bytes: bytes,
        }
    }

    #[test]
    fn each_standby_keeps_its_largest_lags_and_mean_bytes() {
        let seconds = [
            vec![sample(7, Some(0.5), Some(100))],
            vec![sample(7, None, Some(300)), sample(9, Some(0.1), None)],
        ];
        let s = summarize(seconds.iter().map(Vec::as_slice));
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].samples, s[0].max_replay_lag_s), (2, Some(0.5)));
        assert_eq!(s[0].max_replay_lag_bytes, Some(300));
        assert_eq!(s[0].mean_replay_lag_bytes, Some(200.0));
        assert_eq!((s[1].samples, s[1].mean_replay_lag_bytes), (1, None));
    }
}
