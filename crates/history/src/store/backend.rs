//! The two kinds of store behind one narrow interface: run a statement with
//! numbered parameters (`$1`, `$2`, ... in the SQL, as PostgreSQL writes them) and
//! get its rows as text. Everything above it ([`super::schema`], [`super::Store`])
//! is written once, in the SQL both databases accept.

use crate::HistoryError;

/// A statement's parameter.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl From<Option<f64>> for Value {
    fn from(v: Option<f64>) -> Value {
        v.map_or(Value::Null, Value::Real)
    }
}

impl From<Option<i64>> for Value {
    fn from(v: Option<i64>) -> Value {
        v.map_or(Value::Null, Value::Int)
    }
}

impl From<Option<String>> for Value {
    fn from(v: Option<String>) -> Value {
        v.map_or(Value::Null, Value::Text)
    }
}

impl From<&str> for Value {
    fn from(v: &str) -> Value {
        Value::Text(v.to_string())
    }
}

/// A row, each column as text (`None`: NULL).
pub type Row = Vec<Option<String>>;

/// Which database: where their SQL differs (the id column, where the tables live).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

/// One store's connection.
pub trait Backend: Send {
    fn dialect(&self) -> Dialect;
    /// Runs `sql` with `params` bound to `$1`, `$2`, ...; its rows.
    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, HistoryError>;
    /// Opens a transaction that writes (SQLite takes its write lock at once, so two
    /// writers queue at the start rather than fail at the first write).
    fn begin(&mut self) -> Result<(), HistoryError>;
}

/// What else the schema's checks ask of a backend.
pub trait Inspect {
    /// The tables in the store's namespace (SQLite: the file; PostgreSQL: the
    /// schema `pgbench_rs_history`), read without writing anything.
    fn tables(&mut self) -> Result<Vec<String>, HistoryError>;
    /// Called once the store is known to be ours (or empty): what may write to it
    /// now that it is safe to (SQLite's WAL mode lives in the file's header).
    fn ready(&mut self) -> Result<(), HistoryError>;
}
