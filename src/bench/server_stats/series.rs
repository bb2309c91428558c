//! The sampler's per-second series, kept small and bounded for day-long runs. A
//! second's counters are numbers in the views' column order (the names are kept
//! once), its activity samples counts by an index into the states and wait events
//! seen: 0.4 kB a second on PostgreSQL 15, where a `ServerSecond` (what it becomes at
//! the end) allocates 3.8 kB. And at most [`MAX_SERIES`] entries: when a run outlasts
//! them, pairs of entries merge and each covers twice as many seconds (an hour's run
//! keeps its seconds, a day's has 32-second entries), so the sampler's memory stops
//! growing after an hour at 1.4 MB.

use pgbench_results::server::replication::StandbySample;
use pgbench_results::server::{self, ActivityCount, Counters, ServerSecond, MAX_SERIES};

/// A state and wait event of a sample.
type Label = (Option<String>, Option<String>, Option<String>);

/// One entry: `seconds` seconds from `t`.
struct Entry {
    t: i64,
    seconds: i64,
    /// The counters' change in the layout's order; `None`: not read in one of its
    /// seconds.
    counters: Option<Box<[i64]>>,
    /// Samples by label.
    activity: Vec<(u32, i64)>,
    /// The last second's standbys.
    standbys: Vec<StandbySample>,
}

impl Entry {
    /// The entry that follows this one merged into it.
    fn absorb(&mut self, next: Entry) {
        self.seconds += next.seconds;
        self.counters = match (self.counters.take(), next.counters) {
            (Some(mut a), Some(b)) => {
                a.iter_mut().zip(b.iter()).for_each(|(a, b)| *a += b);
                Some(a)
            }
            _ => None,
        };
        for (label, n) in next.activity {
            match self.activity.iter_mut().find(|a| a.0 == label) {
                Some(a) => a.1 += n,
                None => self.activity.push((label, n)),
            }
        }
        if !next.standbys.is_empty() {
            self.standbys = next.standbys;
        }
    }
}

/// The series under way.
pub struct Series {
    /// Each counter's view and column.
    layout: Vec<(String, String)>,
    labels: Vec<Label>,
    entries: Vec<Entry>,
    /// Seconds an entry covers: 1, or a power of two.
    resolution: i64,
    /// Seconds recorded.
    seconds: i64,
    max_entries: usize,
}

impl Series {
    /// A series of the counters of `layout` (view, column).
    pub fn new(layout: Vec<(String, String)>) -> Series {
        Series::with_max(layout, MAX_SERIES)
    }

    fn with_max(layout: Vec<(String, String)>, max_entries: usize) -> Series {
        Series {
            layout,
            labels: Vec::new(),
            entries: Vec::new(),
            resolution: 1,
            seconds: 0,
            max_entries: max_entries.max(2),
        }
    }

    /// Seconds recorded.
    pub fn seconds(&self) -> i64 {
        self.seconds
    }

    fn label(&mut self, a: &ActivityCount) -> u32 {
        let label = (
            a.state.clone(),
            a.wait_event_type.clone(),
            a.wait_event.clone(),
        );
        match self.labels.iter().position(|l| *l == label) {
            Some(i) => i as u32,
            None => {
                self.labels.push(label);
                (self.labels.len() - 1) as u32
            }
        }
    }

    /// The next second: its counters' change (`None`: not read), its samples and its
    /// standbys.
    pub fn push(
        &mut self,
        counters: Option<&Counters>,
        activity: &[ActivityCount],
        standbys: Vec<StandbySample>,
    ) {
        let counters = counters.and_then(|c| {
            self.layout
                .iter()
                .map(|(view, col)| server::counter(c, view, col))
                .collect::<Option<Box<[i64]>>>()
        });
        let activity = activity
            .iter()
            .map(|a| (self.label(a), a.samples))
            .collect();
        let entry = Entry {
            t: self.seconds,
            seconds: 1,
            counters,
            activity,
            standbys,
        };
        self.seconds += 1;
        match self.entries.last_mut() {
            Some(last) if last.seconds < self.resolution => last.absorb(entry),
            _ => self.entries.push(entry),
        }
        if self.entries.len() > self.max_entries {
            self.coarsen();
        }
    }

    /// Each pair of entries merged: half as many, each twice as long.
    fn coarsen(&mut self) {
        self.resolution *= 2;
        let mut merged = Vec::with_capacity(self.max_entries);
        let mut entries = std::mem::take(&mut self.entries).into_iter();
        while let Some(mut a) = entries.next() {
            if let Some(b) = entries.next() {
                a.absorb(b);
            }
            merged.push(a);
        }
        self.entries = merged;
    }

    /// The heap the series holds, in bytes (what it allocated for).
    pub fn heap_bytes(&self) -> usize {
        let labels: usize = self
            .labels
            .iter()
            .map(|(a, b, c)| {
                [a, b, c]
                    .iter()
                    .map(|s| s.as_ref().map_or(0, String::capacity))
                    .sum::<usize>()
            })
            .sum();
        let entries: usize = self
            .entries
            .iter()
            .map(|e| {
                e.counters.as_ref().map_or(0, |c| c.len() * 8)
                    + e.activity.capacity() * std::mem::size_of::<(u32, i64)>()
                    + e.standbys.capacity() * std::mem::size_of::<StandbySample>()
            })
            .sum();
        self.entries.capacity() * std::mem::size_of::<Entry>()
            + self.labels.capacity() * std::mem::size_of::<Label>()
            + labels
            + entries
    }

    /// The series as the results file keeps it (`t` from the window's start).
    pub fn into_seconds(self) -> Vec<ServerSecond> {
        let Series {
            layout,
            labels,
            entries,
            ..
        } = self;
        entries
            .into_iter()
            .map(|e| {
                let mut counters = Counters::new();
                for ((view, col), v) in layout.iter().zip(e.counters.iter().flat_map(|c| c.iter()))
                {
                    counters
                        .entry(view.clone())
                        .or_default()
                        .insert(col.clone(), *v);
                }
                let activity = e
                    .activity
                    .iter()
                    .map(|&(label, samples)| {
                        let (state, wait_event_type, wait_event) = labels[label as usize].clone();
                        ActivityCount {
                            state,
                            wait_event_type,
                            wait_event,
                            samples,
                        }
                    })
                    .collect();
                ServerSecond {
                    t: e.t,
                    seconds: e.seconds,
                    counters,
                    activity,
                    standbys: e.standbys,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout() -> Vec<(String, String)> {
        ["xact_commit", "xact_rollback", "blks_hit", "blks_read"]
            .iter()
            .map(|c| ("pg_stat_database".to_string(), c.to_string()))
            .collect()
    }

    fn second(commits: i64) -> Counters {
        let mut c = Counters::new();
        for (view, col) in layout() {
            c.entry(view).or_default().insert(col, commits);
        }
        c
    }

    fn sample(state: &str, n: i64) -> ActivityCount {
        ActivityCount {
            state: Some(state.into()),
            wait_event_type: Some("Client".into()),
            wait_event: Some("ClientRead".into()),
            samples: n,
        }
    }

    #[test]
    fn seconds_keep_their_counters_and_a_lost_one_is_missing_not_zero() {
        let mut s = Series::new(layout());
        s.push(Some(&second(5)), &[sample("idle", 10)], Vec::new());
        s.push(None, &[], Vec::new());
        s.push(Some(&second(7)), &[sample("idle", 9)], Vec::new());
        let out = s.into_seconds();
        assert_eq!(out.len(), 3);
        assert_eq!(out[0].counters, second(5));
        assert!(out[1].counters.is_empty(), "{:?}", out[1]);
        assert_eq!(out[2].t, 2);
        assert_eq!(out[2].activity, [sample("idle", 9)]);
    }

    #[test]
    fn a_long_run_merges_seconds_and_keeps_the_totals() {
        let mut s = Series::with_max(layout(), 4);
        for i in 0..11 {
            s.push(Some(&second(i)), &[sample("idle", 10)], Vec::new());
        }
        let out = s.into_seconds();
        let spans: Vec<(i64, i64)> = out.iter().map(|e| (e.t, e.seconds)).collect();
        assert_eq!(spans, [(0, 4), (4, 4), (8, 3)]);
        let commits: i64 = out
            .iter()
            .map(|e| server::counter(&e.counters, "pg_stat_database", "xact_commit").unwrap())
            .sum();
        assert_eq!(commits, (0..11).sum::<i64>());
        assert_eq!(out[1].activity, [sample("idle", 40)]);
    }

    /// The bound on the sampler's memory: a day's seconds, with the counters of 30
    /// columns and three states a second, hold no more than the first hour's.
    #[test]
    fn a_day_long_series_holds_no_more_than_an_hour_s() {
        let layout: Vec<(String, String)> = (0..30)
            .map(|i| ("pg_stat_database".to_string(), format!("c{i}")))
            .collect();
        let mut counters = Counters::new();
        for (view, col) in &layout {
            counters
                .entry(view.clone())
                .or_default()
                .insert(col.clone(), 1);
        }
        let activity = [sample("idle", 6), sample("active", 3), sample("other", 1)];
        let mut s = Series::new(layout);
        let mut an_hour = 0;
        for i in 0..86_400 {
            s.push(Some(&counters), &activity, Vec::new());
            if i < MAX_SERIES {
                an_hour = an_hour.max(s.heap_bytes());
            } else {
                assert!(s.heap_bytes() <= an_hour, "second {i}");
            }
        }
        // An hour of seconds in well under 2 MB (as ServerSeconds: 14 MB).
        assert!(an_hour < 2_000_000, "{an_hour}");
        let out = s.into_seconds();
        assert!(out.len() <= MAX_SERIES, "{}", out.len());
        assert_eq!(out[0].seconds, 32);
        assert_eq!(out.iter().map(|e| e.seconds).sum::<i64>(), 86_400);
    }
}
