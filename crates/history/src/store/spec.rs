//! What a STORE string names: a file (the embedded SQLite store) or a PostgreSQL
//! database (a `postgresql://` URI or a `key=value` conninfo, as libpq tells them
//! apart), and where the default store is. Pure: the environment comes in as a
//! function.

use crate::HistoryError;
use std::path::PathBuf;

/// A store's location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreSpec {
    /// A SQLite file, created on first use.
    File(PathBuf),
    /// A PostgreSQL database (a conninfo string or URI, password and all): the
    /// store lives in its schema `pgbench_rs_history`, made on first use.
    Postgres(String),
}

impl StoreSpec {
    /// Reads a STORE string: a URI (`postgresql://`, `postgres://`) or a string with
    /// `=` in it is a connection string, as libpq decides for a database name;
    /// anything else a file path.
    pub fn parse(spec: &str) -> Result<StoreSpec, HistoryError> {
        if spec.trim().is_empty() {
            return Err(HistoryError::Invalid(
                "an empty history store name: give a file or a PostgreSQL conninfo".into(),
            ));
        }
        let uri = spec.starts_with("postgresql://") || spec.starts_with("postgres://");
        Ok(if uri || spec.contains('=') {
            StoreSpec::Postgres(spec.to_string())
        } else {
            StoreSpec::File(PathBuf::from(spec))
        })
    }

    /// How errors and messages name it: the path, or the connection string with its
    /// passwords masked.
    pub fn display(&self) -> String {
        match self {
            StoreSpec::File(p) => p.display().to_string(),
            StoreSpec::Postgres(c) => pgbench_wire::redact_secrets(c),
        }
    }
}

/// The default store: `$PGBENCH_RS_HISTORY` when set (a file or a conninfo), else
/// `$XDG_DATA_HOME/pgbench-rs/history.sqlite`, else
/// `$HOME/.local/share/pgbench-rs/history.sqlite` (the XDG base directory rules).
pub fn default_store_from(env: &dyn Fn(&str) -> Option<String>) -> Result<StoreSpec, HistoryError> {
    let set = |k: &str| env(k).filter(|v| !v.is_empty());
    if let Some(spec) = set("PGBENCH_RS_HISTORY") {
        return StoreSpec::parse(&spec);
    }
    // XDG: a relative $XDG_DATA_HOME is invalid and is to be ignored.
    let data = match set("XDG_DATA_HOME").filter(|d| d.starts_with('/')) {
        Some(d) => PathBuf::from(d),
        None => PathBuf::from(set("HOME").ok_or(HistoryError::NoDefault)?).join(".local/share"),
    };
    Ok(StoreSpec::File(
        data.join("pgbench-rs").join("history.sqlite"),
    ))
}

/// [`default_store_from`] the process's environment.
pub fn default_store() -> Result<StoreSpec, HistoryError> {
    default_store_from(&|k| std::env::var(k).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_store_string_is_a_file_or_a_connection_string() {
        assert_eq!(
            StoreSpec::parse("runs/h.sqlite").unwrap(),
            StoreSpec::File("runs/h.sqlite".into())
        );
        for c in ["postgresql://u:pw@h/db", "postgres://h", "host=h dbname=x"] {
            assert_eq!(StoreSpec::parse(c).unwrap(), StoreSpec::Postgres(c.into()));
        }
        assert!(StoreSpec::parse(" ").is_err());
        assert_eq!(
            StoreSpec::parse("host=h password=s3cret")
                .unwrap()
                .display(),
            "host=h password=********"
        );
    }

    #[test]
    fn the_default_store_follows_the_xdg_rules() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                pairs
                    .iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let file = |p: &str| StoreSpec::File(p.into());
        assert_eq!(
            default_store_from(&env(&[("HOME", "/home/u")])).unwrap(),
            file("/home/u/.local/share/pgbench-rs/history.sqlite")
        );
        assert_eq!(
            default_store_from(&env(&[("HOME", "/home/u"), ("XDG_DATA_HOME", "/d")])).unwrap(),
            file("/d/pgbench-rs/history.sqlite")
        );
        assert_eq!(
            default_store_from(&env(&[("HOME", "/h"), ("XDG_DATA_HOME", "rel")])).unwrap(),
            file("/h/.local/share/pgbench-rs/history.sqlite")
        );
        assert_eq!(
            default_store_from(&env(&[("PGBENCH_RS_HISTORY", "dbname=h"), ("HOME", "/h")]))
                .unwrap(),
            StoreSpec::Postgres("dbname=h".into())
        );
        assert!(matches!(
            default_store_from(&env(&[])),
            Err(HistoryError::NoDefault)
        ));
    }
}
