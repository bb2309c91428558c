//! A watcher's connection ([`Watched`]) and what the window's end may do to it from
//! the main thread ([`Link`]): cancel its query, shut its socket. The connection is
//! the watcher's own, under an application name of its own (so that neither watcher
//! counts the other among the run's backends), and is made again when lost, unless
//! the window's end has cut it off.

use crate::bench::control::CANCEL_TIMEOUT;
use pgbench_wire::{CancelToken, ConnectOptions, Connection, QueryError};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::{Arc, Mutex, MutexGuard};

/// A query's rows as text.
pub type Rows = Vec<Vec<Option<String>>>;

#[derive(Default)]
struct LinkState {
    /// The connection's cancel key and socket, while it is open.
    registered: Option<(CancelToken, RawFd)>,
    /// The window's end shut the connection: it is not made again.
    cut: bool,
}

/// The main thread's hold on a watcher's connection. The socket is touched only under
/// its lock, which the watcher also takes before it drops a connection, so a
/// descriptor closed and reused is never shut.
#[derive(Clone, Default)]
pub struct Link(Arc<Mutex<LinkState>>);

impl Link {
    fn state(&self) -> MutexGuard<'_, LinkState> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a cancel request for the watcher's query, on a thread nobody waits for
    /// (bounded as the clients' are: a frozen server must not hold the caller).
    pub fn cancel(&self) {
        let Some(token) = self.state().registered.as_ref().map(|r| r.0.clone()) else {
            return;
        };
        let _ = std::thread::Builder::new()
            .name("cancel".into())
            .stack_size(64 * 1024)
            .spawn(move || token.cancel_within(CANCEL_TIMEOUT));
    }

    /// Shuts the connection's socket (its reads return at once) and keeps it from
    /// being made again.
    pub fn cut(&self) {
        let mut state = self.state();
        state.cut = true;
        if let Some((_, fd)) = &state.registered {
            crate::sys::shutdown_socket(*fd);
        }
    }

    fn is_cut(&self) -> bool {
        self.state().cut
    }
}

/// A watcher's connection.
pub struct Watched {
    conn: Connection,
    opts: ConnectOptions,
    /// The application name it sets (the run's, and what the watcher is).
    name: String,
    /// The comment its queries begin with (`/* pgbench-rs --server-stats */`), by
    /// which `pg_stat_statements` and `pg_stat_activity` tell them apart.
    mark: String,
    link: Link,
    /// Transactions it ran since [`Watched::reset_transactions`] (each query is one,
    /// failed or not, as `pg_stat_database` counts them; a connection's start one).
    transactions: i64,
}

/// The run's application name: its clients' (what they set, or the fallback).
pub fn run_application_name(opts: &ConnectOptions) -> String {
    opts.get("application_name")
        .filter(|a| !a.is_empty())
        .or_else(|| opts.get("fallback_application_name"))
        .unwrap_or("")
        .to_string()
}

/// A literal in SQL.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

fn open(opts: &ConnectOptions, name: &str) -> Result<Connection, String> {
    let mut conn = Connection::connect(opts).map_err(|e| e.to_string())?;
    conn.execute(&format!("set application_name = {}", quote(name)))
        .map_err(|e| short(&e))?;
    Ok(conn)
}

/// What a query's failure says, on one line, without the caret block.
pub fn short(e: &QueryError) -> String {
    let text = e
        .db_error()
        .map_or_else(|| e.to_string(), |d| d.message.clone());
    text.lines().next().unwrap_or_default().to_string()
}

impl Watched {
    /// Connects as the run's clients do, named `what` after the run's application
    /// name (`pgbench-rs (--server-stats)`).
    pub fn connect(opts: &ConnectOptions, what: &str) -> Result<Watched, String> {
        let name = format!("{} ({what})", run_application_name(opts));
        let mark = format!("/* pgbench-rs {what} */ ");
        let conn = open(opts, &name)?;
        let link = Link::default();
        link.state().registered = Some((conn.cancel_token(), conn.as_raw_fd()));
        Ok(Watched {
            conn,
            opts: opts.clone(),
            name,
            mark,
            link,
            transactions: 0,
        })
    }

    /// The hold the window's end keeps on it.
    pub fn link(&self) -> Link {
        self.link.clone()
    }

    /// Runs `sql` (marked as the watcher's), counting its transaction when it
    /// reached the server.
    pub fn query(&mut self, sql: &str) -> Result<Rows, QueryError> {
        let rows = self.conn.query_rows(&format!("{}{sql}", self.mark));
        if rows.is_ok() || !self.lost(rows.as_ref().err()) {
            self.transactions += 1;
        }
        rows
    }

    /// Whether the connection is gone (after a query's failure `e`).
    pub fn lost(&self, e: Option<&QueryError>) -> bool {
        self.conn.is_broken() || matches!(e, Some(QueryError::Conn(_)))
    }

    /// Whether the window's end cut the connection off (its queries then fail).
    pub fn cut_off(&self) -> bool {
        self.link.is_cut()
    }

    /// Transactions since the last reset.
    pub fn transactions(&self) -> i64 {
        self.transactions
    }

    pub fn reset_transactions(&mut self) {
        self.transactions = 0;
    }

    /// Connects again (after the connection was lost); fails when the window's end has
    /// cut it off, or with the connection's error.
    pub fn reconnect(&mut self) -> Result<(), String> {
        if self.link.is_cut() {
            return Err("the end of the run cut it off".into());
        }
        let conn = open(&self.opts, &self.name)?;
        // A connection's start is a transaction, and so is the name's setting.
        self.transactions += 2;
        let mut state = self.link.state();
        if state.cut {
            return Err("the end of the run cut it off".into());
        }
        state.registered = Some((conn.cancel_token(), conn.as_raw_fd()));
        // The old one is closed under the lock: its descriptor is no longer registered.
        self.conn = conn;
        Ok(())
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        // Before the descriptor closes (the connection is dropped after this).
        self.link.state().registered = None;
    }
}

/// The run's own backends: client backends of the run's database under the run's
/// application name (the watchers have names of their own).
pub fn run_backends_query(application_name: &str) -> String {
    format!(
        "select count(*) from pg_catalog.pg_stat_activity \
         where datname = current_database() and backend_type = 'client backend' \
         and pid <> pg_backend_pid() and application_name = {}",
        quote(application_name)
    )
}

impl Watched {
    /// Waits up to `within_us` for the run's backends to exit (so that what they did is
    /// counted, and published: a backend publishes its counters when it exits);
    /// returns how many are left, or the failure of the query that asked.
    pub fn await_run_backends(&mut self, within_us: i64) -> Result<i64, QueryError> {
        let sql = run_backends_query(&run_application_name(&self.opts));
        let deadline = crate::clock::now_us() + within_us;
        loop {
            let left = self
                .query(&sql)?
                .first()
                .and_then(|r| r.first().cloned().flatten())
                .and_then(|v| v.parse().ok())
                .unwrap_or(0);
            if left == 0 || crate::clock::now_us() >= deadline {
                return Ok(left);
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    }
}
