//! A load's state as the metrics endpoint shows it under `-i` (pgbench's steps, TPC-C,
//! sysbench): rows written per table, the rows each table is to get, a resumable
//! load's units and the step under way.
//!
//! The loaders feed it where they feed their progress lines (`init::queue`'s
//! `Queue::rows`, the one-connection COPY loop), through the free functions here: they
//! do nothing but one load of a `OnceLock` when no endpoint listens, and an atomic
//! add under a read lock when one does. A load is one per process, as its Ctrl-C
//! handling is (`init::interrupt`), so the state is the process's, installed once by
//! [`install`] before the loader starts; the loaders need no new parameter.

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, RwLock};

/// What the endpoint shows once every step has run.
pub const DONE: &str = "done";

/// One table's figures.
#[derive(Debug)]
struct Table {
    name: String,
    rows: AtomicU64,
    /// The rows this process is to write to it; -1: not known.
    expected: AtomicI64,
}

/// The load's live state.
#[derive(Debug, Default)]
pub struct LoadLive {
    /// In the order first met (expected or written).
    tables: RwLock<Vec<Arc<Table>>>,
    /// The steps in order (as the loader declares them, then as they start) and the
    /// one under way.
    steps: Mutex<(Vec<String>, Option<usize>)>,
    /// Whether the load is resumable (`--resume`, `--shard`): only then are units
    /// served.
    resumable: AtomicBool,
    units_done: AtomicU64,
    units_total: AtomicU64,
}

/// One table at a scrape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableSnapshot {
    pub name: String,
    pub rows: u64,
    pub expected: Option<u64>,
}

/// Everything a scrape of a load shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LoadSnapshot {
    pub tables: Vec<TableSnapshot>,
    /// Every step known so far, in order, with whether it is the one under way.
    pub steps: Vec<(String, bool)>,
    /// Units done and units of this process's load (its shard's share), under
    /// `--resume` or `--shard`.
    pub units: Option<(u64, u64)>,
}

impl LoadLive {
    /// `table`'s entry, made on first use.
    fn table(&self, table: &str) -> Arc<Table> {
        let found = |tables: &[Arc<Table>]| tables.iter().find(|t| t.name == table).cloned();
        if let Some(t) = found(&self.tables.read().unwrap_or_else(|e| e.into_inner())) {
            return t;
        }
        let mut tables = self.tables.write().unwrap_or_else(|e| e.into_inner());
        if let Some(t) = found(&tables) {
            return t;
        }
        let t = Arc::new(Table {
            name: table.to_string(),
            rows: AtomicU64::new(0),
            expected: AtomicI64::new(-1),
        });
        tables.push(Arc::clone(&t));
        t
    }

    /// `n` more rows written to `table`.
    pub fn rows(&self, table: &str, n: i64) {
        self.table(table)
            .rows
            .fetch_add(n.max(0) as u64, Ordering::Relaxed);
    }

    /// `table` is to get `n` more rows from this process.
    pub fn expect(&self, table: &str, n: i64) {
        let t = self.table(table);
        let _ = t
            .expected
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |e| {
                Some(e.max(0) + n.max(0))
            });
    }

    fn lock_steps(&self) -> std::sync::MutexGuard<'_, (Vec<String>, Option<usize>)> {
        self.steps.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The steps the load will run, in order, before the first starts.
    pub fn declare_steps(&self, names: &[&str]) {
        let mut steps = self.lock_steps();
        for name in names {
            if !steps.0.iter().any(|s| s == name) {
                steps.0.push(name.to_string());
            }
        }
    }

    /// `name` is the step under way from now on.
    pub fn step(&self, name: &str) {
        let mut steps = self.lock_steps();
        let at = match steps.0.iter().position(|s| s == name) {
            Some(at) => at,
            None => {
                steps.0.push(name.to_string());
                steps.0.len() - 1
            }
        };
        steps.1 = Some(at);
    }

    /// A resumable load: `done` of this process's `total` units are in the record.
    pub fn units(&self, done: u64, total: u64) {
        self.units_done.store(done, Ordering::Relaxed);
        self.units_total.store(total, Ordering::Relaxed);
        self.resumable.store(true, Ordering::Relaxed);
    }

    /// One more unit committed with its row of the record.
    pub fn unit_done(&self) {
        self.units_done.fetch_add(1, Ordering::Relaxed);
    }

    pub fn snapshot(&self) -> LoadSnapshot {
        let tables = self.tables.read().unwrap_or_else(|e| e.into_inner());
        let tables = tables
            .iter()
            .map(|t| TableSnapshot {
                name: t.name.clone(),
                rows: t.rows.load(Ordering::Relaxed),
                expected: u64::try_from(t.expected.load(Ordering::Relaxed)).ok(),
            })
            .collect();
        let steps = self.lock_steps();
        let steps = (steps.0.iter().enumerate())
            .map(|(i, s)| (s.clone(), steps.1 == Some(i)))
            .collect();
        let units = self.resumable.load(Ordering::Relaxed).then(|| {
            (
                self.units_done.load(Ordering::Relaxed),
                self.units_total.load(Ordering::Relaxed),
            )
        });
        LoadSnapshot {
            tables,
            steps,
            units,
        }
    }
}

/// The process's load state, once an endpoint serves it.
static LOAD: OnceLock<Arc<LoadLive>> = OnceLock::new();

/// Makes `live` the state the loaders feed (the first call wins: one load a process).
pub fn install(live: Arc<LoadLive>) -> Arc<LoadLive> {
    Arc::clone(LOAD.get_or_init(|| live))
}

fn current() -> Option<&'static LoadLive> {
    LOAD.get().map(|l| &**l)
}

/// `n` more rows written to `table` (nothing without an endpoint).
pub fn rows(table: &str, n: i64) {
    if let Some(l) = current() {
        l.rows(table, n);
    }
}

/// `table` is to get `n` more rows from this process.
pub fn expect(table: &str, n: i64) {
    if let Some(l) = current() {
        l.expect(table, n);
    }
}

/// The steps the load will run, in order.
pub fn declare_steps(names: &[&str]) {
    if let Some(l) = current() {
        l.declare_steps(names);
    }
}

/// The step under way from now on ([`DONE`] at the end).
pub fn step(name: &str) {
    if let Some(l) = current() {
        l.step(name);
    }
}

/// A resumable load: `done` of this process's `total` units recorded.
pub fn units(done: usize, total: usize) {
    if let Some(l) = current() {
        l.units(done as u64, total as u64);
    }
}

/// One more unit recorded.
pub fn unit_done() {
    if let Some(l) = current() {
        l.unit_done();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_expected_steps_and_units() {
        let live = LoadLive::default();
        assert_eq!(
            live.snapshot(),
            LoadSnapshot {
                tables: vec![],
                steps: vec![],
                units: None
            }
        );
        live.declare_steps(&["drop tables", "create tables"]);
        live.step("create tables");
        live.expect("a", 10);
        live.expect("a", 5);
        live.rows("a", 3);
        live.rows("b", 4);
        live.rows("a", 2);
        live.units(2, 7);
        live.unit_done();
        live.step(DONE);
        let s = live.snapshot();
        assert_eq!(
            s.tables,
            vec![
                TableSnapshot {
                    name: "a".into(),
                    rows: 5,
                    expected: Some(15)
                },
                TableSnapshot {
                    name: "b".into(),
                    rows: 4,
                    expected: None
                },
            ]
        );
        assert_eq!(
            s.steps,
            vec![
                ("drop tables".into(), false),
                ("create tables".into(), false),
                (DONE.into(), true)
            ]
        );
        assert_eq!(s.units, Some((3, 7)));
    }
}
