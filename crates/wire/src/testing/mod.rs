//! A PostgreSQL server for tests, in process (the `testing` feature): a loopback
//! listener that speaks the v3 protocol from scripted replies, so the connection
//! and the benchmark client above it can be tested without a cluster.
//!
//! Each connection runs on a thread of its own with the test's closure. The closure
//! gets a [`Session`]: [`Session::accept`] does the startup handshake (SSL refused,
//! `AuthenticationOk`, `ParameterStatus`, `BackendKeyData`, `ReadyForQuery`), then
//! [`Session::answer`] reads the client's messages and answers each statement with
//! the [`Reply`] the test's responder gives: rows, a command tag, an error with its
//! SQLSTATE (mid-pipeline too: the rest is skipped up to the next Sync, as a server
//! does), a dropped connection, or silence. The transaction status in each
//! `ReadyForQuery` follows `BEGIN`/`COMMIT`/`ROLLBACK` and errors. Writes can be cut
//! into tiny packets ([`Session::split_writes`]) and replies delayed (the responder
//! may sleep, or move a test clock, before it returns).

mod proto;

pub use proto::Frontend;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A listener on a free loopback port; serves until the test process ends.
pub struct FakeServer {
    port: u16,
    counts: Arc<Counts>,
}

#[derive(Default)]
struct Counts {
    /// Connections accepted (cancel requests included).
    accepted: AtomicUsize,
    /// Cancel requests received.
    cancels: AtomicUsize,
}

impl FakeServer {
    /// Runs `serve` on every connection, numbered from 0 in the order accepted.
    pub fn start(serve: impl Fn(Session) + Send + Sync + 'static) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let port = listener.local_addr().expect("its address").port();
        let counts = Arc::new(Counts::default());
        let serve = Arc::new(serve);
        let shared = Arc::clone(&counts);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let number = shared.accepted.fetch_add(1, Ordering::SeqCst);
                let (serve, counts) = (Arc::clone(&serve), Arc::clone(&shared));
                std::thread::spawn(move || {
                    let _ = stream.set_nodelay(true);
                    serve(Session::new(stream, number, counts));
                });
            }
        });
        FakeServer { port, counts }
    }

    /// A server whose every connection is accepted and answered by `respond`.
    pub fn answering(respond: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> FakeServer {
        FakeServer::start(move |mut s| {
            if s.accept() {
                s.answer(&respond);
            }
        })
    }

    pub fn host(&self) -> &'static str {
        "127.0.0.1"
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    /// Connections accepted so far, cancel requests included.
    pub fn connections(&self) -> usize {
        self.counts.accepted.load(Ordering::SeqCst)
    }

    /// Cancel requests received so far.
    pub fn cancels(&self) -> usize {
        self.counts.cancels.load(Ordering::SeqCst)
    }
}

/// One statement the client asked to run: its text (a simple Query's whole text, or
/// the statement a Bind names) and its parameters as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub sql: String,
    pub params: Vec<Option<String>>,
    /// Which connection of the server it came on (from 0).
    pub connection: usize,
    /// Which statement of the connection it is (from 0).
    pub number: usize,
}

/// How the server answers one statement.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `CommandComplete` with this tag.
    Tag(String),
    /// A result with these columns and rows (`None`: NULL), tag `SELECT n`.
    Rows {
        columns: Vec<String>,
        rows: Vec<Vec<Option<String>>>,
    },
    /// `EmptyQueryResponse`.
    Empty,
    /// `ErrorResponse` of severity ERROR with this SQLSTATE and message.
    Error { code: String, message: String },
    /// `ErrorResponse` of severity FATAL, then the connection closes.
    Fatal { code: String, message: String },
    /// `CopyInResponse` (a COPY the client cannot run).
    CopyIn,
    /// What was answered so far goes out, then the connection closes without a word.
    Drop,
    /// What was answered so far goes out, then nothing more: the server reads on
    /// until the client goes.
    Hang,
}

impl Reply {
    /// A result of one row of text values, columns named as given.
    pub fn row(columns: &[&str], values: &[&str]) -> Reply {
        Reply::Rows {
            columns: columns.iter().map(|c| c.to_string()).collect(),
            rows: vec![values.iter().map(|v| Some(v.to_string())).collect()],
        }
    }

    /// An ERROR with SQLSTATE `code`.
    pub fn error(code: &str, message: &str) -> Reply {
        Reply::Error {
            code: code.to_string(),
            message: message.to_string(),
        }
    }

    /// What a server says to the usual statement: `SELECT` returns one row with a
    /// `?column?` of 1, other statements their command's tag (`UPDATE 1`,
    /// `INSERT 0 1`, `BEGIN`, `COMMIT`, ...).
    pub fn usual(sql: &str) -> Reply {
        let word = sql
            .split_whitespace()
            .next()
            .unwrap_or("")
            .trim_end_matches(';')
            .to_ascii_uppercase();
        match word.as_str() {
            "" => Reply::Empty,
            "SELECT" => Reply::row(&["?column?"], &["1"]),
            "UPDATE" | "DELETE" => Reply::Tag(format!("{word} 1")),
            "INSERT" => Reply::Tag("INSERT 0 1".into()),
            "END" => Reply::Tag("COMMIT".into()),
            "START" => Reply::Tag("START TRANSACTION".into()),
            _ => Reply::Tag(word),
        }
    }
}

/// One connection as the server sees it.
pub struct Session {
    stream: TcpStream,
    number: usize,
    counts: Arc<Counts>,
    /// Answers not yet written (a server writes at Sync, Flush and the end of a Query).
    out: Vec<u8>,
    /// Write in pieces of this many bytes, each its own packet.
    chunk: Option<usize>,
    /// Read at most this many bytes at a time, pausing between reads.
    slow_reads: Option<(usize, Duration)>,
    /// The transaction status the next `ReadyForQuery` reports.
    status: u8,
    statements: std::collections::HashMap<String, String>,
    statements_run: usize,
}

/// What the extended protocol keeps between messages.
#[derive(Default)]
struct Extended {
    /// An error was sent: everything up to the next Sync is skipped.
    skipping: bool,
    /// The bound portal's statement and parameters.
    portal: Option<(String, Vec<Option<String>>)>,
    /// The reply decided at Describe, sent at Execute.
    decided: Option<Reply>,
}

impl Session {
    fn new(stream: TcpStream, number: usize, counts: Arc<Counts>) -> Session {
        Session {
            stream,
            number,
            counts,
            out: Vec::new(),
            chunk: None,
            slow_reads: None,
            status: b'I',
            statements: Default::default(),
            statements_run: 0,
        }
    }

    /// Which connection of the server this is (from 0).
    pub fn number(&self) -> usize {
        self.number
    }

    /// From now on every write goes out in pieces of `bytes` bytes, a short pause
    /// between them, so the client reads messages cut anywhere.
    pub fn split_writes(&mut self, bytes: usize) {
        self.chunk = Some(bytes.max(1));
    }

    /// From now on the client's messages are read `bytes` at a time with `pause`
    /// between reads, so a large request fills the socket buffers and the client's
    /// writes block (or come back short, or with EAGAIN).
    pub fn read_slowly(&mut self, bytes: usize, pause: Duration) {
        self.slow_reads = Some((bytes.max(1), pause));
    }

    /// The startup handshake: refuses SSL and GSS encryption, reads the startup
    /// packet and says `AuthenticationOk` and the rest. False if the client went (or
    /// sent a cancel request, which is counted).
    pub fn accept(&mut self) -> bool {
        if !self.startup() {
            return false;
        }
        proto::authentication_ok(&mut self.out);
        for (name, value) in [
            ("server_version", "15.20"),
            ("server_encoding", "UTF8"),
            ("client_encoding", "UTF8"),
            ("DateStyle", "ISO, MDY"),
            ("integer_datetimes", "on"),
            ("standard_conforming_strings", "on"),
        ] {
            proto::parameter_status(&mut self.out, name, value);
        }
        proto::backend_key_data(&mut self.out, 4000 + self.number as i32, 77);
        proto::ready_for_query(&mut self.out, self.status);
        self.flush()
    }

    /// Refuses the connection as a server does a wrong password (FATAL 28P01).
    pub fn refuse(&mut self, message: &str) {
        if self.startup() {
            proto::error(&mut self.out, "FATAL", "28P01", message);
            self.flush();
        }
    }

    /// Reads up to the startup packet, refusing encryption; false if the client went
    /// or the connection was a cancel request (counted).
    fn startup(&mut self) -> bool {
        loop {
            match self.read_startup() {
                None => return false,
                Some(proto::Startup::EncryptionRequest) => {
                    if self.stream.write_all(b"N").is_err() {
                        return false;
                    }
                }
                Some(proto::Startup::Cancel) => {
                    self.counts.cancels.fetch_add(1, Ordering::SeqCst);
                    return false;
                }
                Some(proto::Startup::Params) => return true,
            }
        }
    }

    fn read_startup(&mut self) -> Option<proto::Startup> {
        let mut len = [0u8; 4];
        self.stream.read_exact(&mut len).ok()?;
        let len = u32::from_be_bytes(len) as usize;
        let mut body = vec![0u8; len.checked_sub(4)?];
        self.stream.read_exact(&mut body).ok()?;
        proto::startup(&body)
    }

    /// The client's next message, or `None` once it is gone.
    pub fn read_message(&mut self) -> Option<Frontend> {
        let mut head = [0u8; 5];
        self.stream.read_exact(&mut head).ok()?;
        let len = u32::from_be_bytes([head[1], head[2], head[3], head[4]]) as usize;
        let mut body = vec![0u8; len.checked_sub(4)?];
        match self.slow_reads {
            None => self.stream.read_exact(&mut body).ok()?,
            Some((bytes, pause)) => {
                for piece in body.chunks_mut(bytes) {
                    std::thread::sleep(pause);
                    self.stream.read_exact(piece).ok()?;
                }
            }
        }
        proto::frontend(head[0], &body)
    }

    /// Writes what is answered so far; false if the client is gone.
    pub fn flush(&mut self) -> bool {
        let out = std::mem::take(&mut self.out);
        let written = match self.chunk {
            None => self.stream.write_all(&out),
            Some(n) => out.chunks(n).try_for_each(|piece| {
                self.stream.write_all(piece)?;
                std::thread::sleep(Duration::from_micros(200));
                Ok(())
            }),
        };
        written.is_ok()
    }

    /// Reads until the client goes (or shuts its socket), answering nothing.
    pub fn hang(&mut self) {
        let mut sink = [0u8; 4096];
        while matches!(self.stream.read(&mut sink), Ok(n) if n > 0) {}
    }

    /// Answers the client's statements with `respond` until the client terminates,
    /// goes, or a [`Reply::Drop`], [`Reply::Fatal`] or [`Reply::Hang`] ends the
    /// conversation.
    pub fn answer(&mut self, respond: &dyn Fn(&Request) -> Reply) {
        let mut ext = Extended::default();
        while let Some(message) = self.read_message() {
            let going_on = match message {
                Frontend::Query(sql) => {
                    let reply = self.decide(respond, sql, Vec::new());
                    let on = self.send_reply(&reply, true);
                    // After a COPY start the client speaks first.
                    if on && reply != Reply::CopyIn {
                        proto::ready_for_query(&mut self.out, self.status);
                    }
                    on && self.flush()
                }
                // CopyFail or CopyDone: the COPY ends in an error, as a server's
                // would without data.
                Frontend::Other(b'f' | b'c') => {
                    proto::error(&mut self.out, "ERROR", "57014", "COPY from stdin failed");
                    proto::ready_for_query(&mut self.out, self.status);
                    self.flush()
                }
                Frontend::Sync => {
                    ext = Extended::default();
                    proto::ready_for_query(&mut self.out, self.status);
                    self.flush()
                }
                Frontend::Flush => self.flush(),
                Frontend::Terminate => false,
                _ if ext.skipping => true,
                other => self.extended(other, &mut ext, respond),
            };
            if !going_on {
                return;
            }
        }
    }

    /// Parse, Bind, Describe, Execute, Close.
    fn extended(
        &mut self,
        message: Frontend,
        ext: &mut Extended,
        respond: &dyn Fn(&Request) -> Reply,
    ) -> bool {
        match message {
            Frontend::Parse { name, sql } => {
                self.statements.insert(name, sql);
                proto::tag_only(&mut self.out, b'1');
            }
            Frontend::Bind {
                statement, params, ..
            } => match self.statements.get(&statement) {
                Some(sql) => {
                    ext.portal = Some((sql.clone(), params));
                    proto::tag_only(&mut self.out, b'2');
                }
                None => {
                    let message = format!("prepared statement \"{statement}\" does not exist");
                    proto::error(&mut self.out, "ERROR", "26000", &message);
                    ext.skipping = true;
                }
            },
            Frontend::Describe { portal: true, .. } => {
                let Some((sql, params)) = ext.portal.clone() else {
                    return true;
                };
                let reply = self.decide(respond, sql, params);
                match &reply {
                    Reply::Rows { columns, .. } => proto::row_description(&mut self.out, columns),
                    Reply::Drop | Reply::Hang => return self.send_reply(&reply, false),
                    _ => proto::tag_only(&mut self.out, b'n'),
                }
                ext.decided = Some(reply);
            }
            Frontend::Describe { portal: false, .. } => {
                proto::parameter_description(&mut self.out);
                proto::tag_only(&mut self.out, b'n');
            }
            Frontend::Execute => {
                let reply = match ext.decided.take() {
                    Some(r) => r,
                    None => {
                        let Some((sql, params)) = ext.portal.clone() else {
                            return true;
                        };
                        self.decide(respond, sql, params)
                    }
                };
                if matches!(reply, Reply::Error { .. }) {
                    ext.skipping = true;
                }
                return self.send_reply(&reply, false);
            }
            Frontend::Close => proto::tag_only(&mut self.out, b'3'),
            Frontend::Other(_) => {}
            Frontend::Query(_) | Frontend::Sync | Frontend::Flush | Frontend::Terminate => {
                unreachable!("handled by answer")
            }
        }
        true
    }

    /// The responder's reply to one statement; in a failed transaction block only
    /// its end is run (SQLSTATE 25P02 for anything else, as a server says).
    fn decide(
        &mut self,
        respond: &dyn Fn(&Request) -> Reply,
        sql: String,
        params: Vec<Option<String>>,
    ) -> Reply {
        let request = Request {
            sql,
            params,
            connection: self.number,
            number: self.statements_run,
        };
        self.statements_run += 1;
        let ends_block = matches!(
            request
                .sql
                .split_whitespace()
                .next()
                .map(str::to_ascii_uppercase)
                .as_deref(),
            Some("ROLLBACK" | "COMMIT" | "END" | "ABORT")
        );
        if self.status == b'E' && !ends_block {
            return Reply::error(
                "25P02",
                "current transaction is aborted, commands ignored until end of transaction block",
            );
        }
        respond(&request)
    }

    /// Puts a reply into the output and moves the transaction status; false if the
    /// conversation ends with it. `simple`: a simple Query (its results carry their
    /// own row description).
    fn send_reply(&mut self, reply: &Reply, simple: bool) -> bool {
        match reply {
            Reply::Tag(tag) => {
                self.status = match tag.split(' ').next().unwrap_or("") {
                    "BEGIN" | "START" => b'T',
                    "COMMIT" | "ROLLBACK" => b'I',
                    _ => self.status,
                };
                proto::command_complete(&mut self.out, tag);
            }
            Reply::Rows { columns, rows } => {
                if simple {
                    proto::row_description(&mut self.out, columns);
                }
                for row in rows {
                    proto::data_row(&mut self.out, row);
                }
                proto::command_complete(&mut self.out, &format!("SELECT {}", rows.len()));
            }
            Reply::Empty => proto::tag_only(&mut self.out, b'I'),
            Reply::Error { code, message } => {
                if self.status == b'T' {
                    self.status = b'E';
                }
                proto::error(&mut self.out, "ERROR", code, message);
            }
            Reply::Fatal { code, message } => {
                proto::error(&mut self.out, "FATAL", code, message);
                self.flush();
                return false;
            }
            Reply::CopyIn => proto::copy_in_response(&mut self.out),
            Reply::Drop => {
                self.flush();
                return false;
            }
            Reply::Hang => {
                self.flush();
                self.hang();
                return false;
            }
        }
        true
    }
}
