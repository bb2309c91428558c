//! The embedded store: one SQLite file through rusqlite. WAL mode, so readers never
//! wait for a writer, and a busy timeout, so two processes recording at once both
//! succeed (the second waits for the first's short transaction). SQLite's "busy"
//! after that wait is [`HistoryError::Locked`]; a file SQLite cannot read as a
//! database is [`HistoryError::NotAStore`], found before anything is written.

use super::backend::{Backend, Dialect, Inspect, Row, Value};
use crate::HistoryError;
use rusqlite::types::ValueRef;
use rusqlite::{ErrorCode, OpenFlags};
use std::path::Path;
use std::time::Duration;

/// How long a writer waits for another's transaction before giving up: recording
/// one run holds the lock for milliseconds, so this is a stuck or crashed process.
pub const BUSY_WAIT: Duration = Duration::from_secs(10);

pub struct Sqlite {
    conn: rusqlite::Connection,
    name: String,
}

impl Sqlite {
    /// Opens (or creates) the file; its folder is made if missing. Nothing is written
    /// to an existing file here.
    pub fn open(path: &Path) -> Result<Sqlite, HistoryError> {
        let name = path.display().to_string();
        let fail = |message: String| HistoryError::Store {
            store: name.clone(),
            message,
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir)
                .map_err(|e| fail(format!("cannot make its folder: {e}")))?;
        }
        if path.is_dir() {
            return Err(fail("is a directory".into()));
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = rusqlite::Connection::open_with_flags(path, flags)
            .map_err(|e| fail(format!("cannot open: {e}")))?;
        conn.busy_timeout(BUSY_WAIT)
            .map_err(|e| fail(e.to_string()))?;
        Ok(Sqlite { conn, name })
    }

    fn error(&self, e: rusqlite::Error) -> HistoryError {
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => HistoryError::Locked {
                store: self.name.clone(),
                waited_s: BUSY_WAIT.as_secs(),
            },
            Some(ErrorCode::NotADatabase) => HistoryError::NotAStore {
                store: self.name.clone(),
                why: "not a SQLite database".into(),
            },
            _ => HistoryError::Store {
                store: self.name.clone(),
                message: e.to_string(),
            },
        }
    }
}

fn text(v: ValueRef<'_>) -> Option<String> {
    match v {
        ValueRef::Null => None,
        ValueRef::Integer(i) => Some(i.to_string()),
        // Rust prints the shortest text that reads back as the same f64.
        ValueRef::Real(f) => Some(f.to_string()),
        ValueRef::Text(t) | ValueRef::Blob(t) => Some(String::from_utf8_lossy(t).into_owned()),
    }
}

impl Backend for Sqlite {
    fn dialect(&self) -> Dialect {
        Dialect::Sqlite
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, HistoryError> {
        // `?N` is SQLite's numbered parameter; `$N` would be a named one.
        let sql = sql.replace('$', "?");
        let run = || -> rusqlite::Result<Vec<Row>> {
            let mut stmt = self.conn.prepare_cached(&sql)?;
            for (i, p) in params.iter().enumerate() {
                match p {
                    Value::Null => stmt.raw_bind_parameter(i + 1, rusqlite::types::Null)?,
                    Value::Int(v) => stmt.raw_bind_parameter(i + 1, v)?,
                    Value::Real(v) => stmt.raw_bind_parameter(i + 1, v)?,
                    Value::Text(v) => stmt.raw_bind_parameter(i + 1, v.as_str())?,
                }
            }
            let columns = stmt.column_count();
            let mut rows = stmt.raw_query();
            let mut out = Vec::new();
            while let Some(row) = rows.next()? {
                out.push(
                    (0..columns)
                        .map(|c| row.get_ref(c).map(text))
                        .collect::<rusqlite::Result<Row>>()?,
                );
            }
            Ok(out)
        };
        run().map_err(|e| self.error(e))
    }

    fn begin(&mut self) -> Result<(), HistoryError> {
        self.query("begin immediate", &[]).map(drop)
    }
}

impl Inspect for Sqlite {
    fn tables(&mut self) -> Result<Vec<String>, HistoryError> {
        let rows = self.query(
            "select name from sqlite_master where type = 'table' and name not like 'sqlite_%' order by name",
            &[],
        )?;
        Ok(rows
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect())
    }

    fn ready(&mut self) -> Result<(), HistoryError> {
        // WAL: a reader (list, trend) never blocks a run's recording, nor it them.
        // Switching a new file to WAL upgrades the pragma's own read lock to a write
        // lock, which SQLite does without its busy handler (two such upgrades could
        // wait on each other): two processes making one new store at once saw
        // SQLITE_BUSY at once, 8 times in 100. Wait as the handler would; the second
        // then finds the file in WAL already.
        let started = std::time::Instant::now();
        loop {
            match self.query("pragma journal_mode = wal", &[]) {
                Err(HistoryError::Locked { .. }) if started.elapsed() < BUSY_WAIT => {
                    std::thread::sleep(Duration::from_millis(5));
                }
                done => break done.map(drop),
            }
        }?;
        self.query("pragma synchronous = normal", &[]).map(drop)
    }
}
