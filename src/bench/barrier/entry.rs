//! What a barrier session's `application_name` says (`pgbr <run id> <I> <state>`):
//! how far each worker got, written and read back, and what worker 0 decides on
//! from everyone's entries (all ready; who is missing).

/// What every barrier session's application name starts with.
pub(super) const TAG: &str = "pgbr";

/// How far a worker got, as its entry shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Joined; its clients are connecting. Worker 0 shows the run's seed here.
    Waiting { seed: Option<u64> },
    /// All its clients are connected.
    Ready { seed: Option<u64> },
    /// Worker 0's decision: start at this instant (Unix µs, server clock).
    Go { start_unix_us: i64 },
    /// Worker 0's decision: its timeout passed before all were ready.
    Failed,
    /// A worker saw `go`.
    Started,
    /// A worker gave up at its deadline, worker 0 absent.
    Quit,
}

impl State {
    /// Whether the worker connected all its clients (or is worker 0 having decided).
    pub(super) fn arrived(self) -> bool {
        !matches!(self, State::Waiting { .. } | State::Quit)
    }
}

/// One barrier session as `pg_stat_activity` shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    pub index: u32,
    pub state: State,
}

impl Entry {
    /// The application name that announces this entry (at most 63 bytes, the server's
    /// limit: `go` with a 14-digit instant and a 16-digit run id is 42).
    pub fn render(&self, run_id: &str) -> String {
        let with_seed = |word: &str, seed: Option<u64>| match seed {
            Some(s) => format!("{word} {s:x}"),
            None => word.to_string(),
        };
        let state = match self.state {
            State::Waiting { seed } => with_seed("wait", seed),
            State::Ready { seed } => with_seed("ready", seed),
            State::Go { start_unix_us } => format!("go {start_unix_us:x}"),
            State::Failed => "fail".to_string(),
            State::Started => "started".to_string(),
            State::Quit => "quit".to_string(),
        };
        format!("{TAG} {run_id} {} {state}", self.index)
    }

    /// The entry an application name announces for this run, if it is one.
    pub fn parse(name: &str, run_id: &str) -> Option<Entry> {
        let words: Vec<&str> = name.split(' ').collect();
        let [tag, run, index, word, rest @ ..] = words.as_slice() else {
            return None;
        };
        if *tag != TAG || *run != run_id {
            return None;
        }
        let hex = match rest {
            [] => None,
            [h] => Some(u64::from_str_radix(h, 16).ok()?),
            _ => return None,
        };
        let state = match (*word, hex) {
            ("wait", seed) => State::Waiting { seed },
            ("ready", seed) => State::Ready { seed },
            ("go", Some(h)) => State::Go {
                start_unix_us: i64::try_from(h).ok()?,
            },
            ("fail", None) => State::Failed,
            ("started", None) => State::Started,
            ("quit", None) => State::Quit,
            _ => return None,
        };
        Some(Entry {
            index: index.parse().ok()?,
            state,
        })
    }
}

/// What worker 0's entry says, if it is there.
pub(super) fn leader(entries: &[Entry]) -> Option<State> {
    entries.iter().find(|e| e.index == 0).map(|e| e.state)
}

/// The workers that have not arrived (connected all their clients).
pub fn missing(entries: &[Entry], count: u32) -> Vec<u32> {
    (0..count)
        .filter(|i| !entries.iter().any(|e| e.index == *i && e.state.arrived()))
        .collect()
}

/// Whether every worker is `ready` (worker 0 decides on this).
pub fn all_ready(entries: &[Entry], count: u32) -> bool {
    (0..count).all(|i| {
        entries
            .iter()
            .any(|e| e.index == i && matches!(e.state, State::Ready { .. }))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "0123456789abcdef";

    #[test]
    fn entries_read_back_as_rendered_and_fit_the_server_limit() {
        let states = [
            State::Waiting { seed: None },
            State::Waiting {
                seed: Some(u64::MAX),
            },
            State::Ready { seed: Some(0) },
            State::Ready { seed: None },
            State::Go {
                start_unix_us: 1_796_000_000_000_000,
            },
            State::Failed,
            State::Started,
            State::Quit,
        ];
        for state in states {
            let e = Entry {
                index: 99_999,
                state,
            };
            let name = e.render(RUN);
            assert!(name.len() <= 63, "{name}");
            assert_eq!(Entry::parse(&name, RUN), Some(e), "{name}");
            assert_eq!(Entry::parse(&name, "fedcba9876543210"), None);
        }
        for other in [
            "pgbench-rs",
            "pgbr 0123456789abcdef x ready",
            "pgbr 0123456789abcdef 1 go",
        ] {
            assert_eq!(Entry::parse(other, RUN), None, "{other}");
        }
    }

    #[test]
    fn worker_zero_decides_on_all_ready_and_names_who_is_missing() {
        let e = |index, state| Entry { index, state };
        let mut entries = vec![
            e(0, State::Ready { seed: Some(1) }),
            e(1, State::Waiting { seed: None }),
            e(2, State::Ready { seed: None }),
        ];
        assert!(!all_ready(&entries, 3));
        assert_eq!(missing(&entries, 4), [1, 3]);
        entries[1].state = State::Ready { seed: None };
        assert!(all_ready(&entries, 3));
        assert!(!all_ready(&entries, 4));
        entries[2].state = State::Quit;
        assert!(!all_ready(&entries, 3));
        assert_eq!(missing(&entries, 3), [2]);
        assert_eq!(leader(&entries), Some(State::Ready { seed: Some(1) }));
    }
}
