//! One scraper's connection to the endpoint, moved on by readiness: read the request
//! head (at most [`MAX_HEAD`] bytes), write the answer, then drain what the peer
//! still sends until it closes. Every step is bounded in bytes and the whole
//! connection in time ([`CONNECTION_TIME`]): a peer that sends without end, sends
//! nothing, or never reads its answer costs the endpoint a fixed amount and is
//! dropped at its deadline, and never holds up the endpoint's thread. Time is passed
//! in and the socket is any [`Peer`], so the limits are tested without a network.

use super::encode::Format;
use super::http::{answer, read_head, refusal, Read, MAX_HEAD};
use std::io::{self, ErrorKind};
use std::time::{Duration, Instant};

/// How long a connection may last from its accept to its close: a scrape takes
/// milliseconds, and Prometheus gives up on one after 10 s by default.
pub const CONNECTION_TIME: Duration = Duration::from_secs(10);

/// How long the answered peer has to close its side. Closing ours with its bytes
/// unread would reset the connection and could lose the answer it is reading
/// (a pipelined request, a body); a client done reading closes at once.
pub const DRAIN_TIME: Duration = Duration::from_secs(1);

/// The most bytes read and thrown away after the answer.
pub const MAX_DRAIN: usize = 64 * 1024;

/// What the connection needs of its socket: a non-blocking stream whose sending
/// side can be ended on its own.
pub trait Peer: io::Read + io::Write {
    /// Sends end-of-file after what was written (`shutdown(SHUT_WR)`).
    fn end_writes(&self);
}

impl Peer for mio::net::TcpStream {
    fn end_writes(&self) {
        let _ = self.shutdown(std::net::Shutdown::Write);
    }
}

/// Whether the connection goes on after a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Waiting for the socket to be ready again.
    Open,
    /// Finished or given up: close it.
    Done,
}

enum Stage {
    Reading(Vec<u8>),
    Writing { out: Vec<u8>, sent: usize },
    Draining { drained: usize },
}

/// A connection and where it is.
pub struct Connection<S> {
    stream: S,
    accepted: Instant,
    deadline: Instant,
    stage: Stage,
}

impl<S: Peer> Connection<S> {
    pub fn new(stream: S, now: Instant) -> Connection<S> {
        Connection {
            stream,
            accepted: now,
            deadline: now + CONNECTION_TIME,
            stage: Stage::Reading(Vec::new()),
        }
    }

    pub fn stream(&mut self) -> &mut S {
        &mut self.stream
    }

    /// When it is dropped whatever its stage.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Which connection makes way for a new one when all are taken: those answered
    /// first, then those still waiting for their request, oldest first. A
    /// connection being answered is never dropped for a newcomer (`None`).
    pub fn eviction_rank(&self) -> Option<(u8, Instant)> {
        match self.stage {
            Stage::Draining { .. } => Some((0, self.accepted)),
            Stage::Reading(_) => Some((1, self.accepted)),
            Stage::Writing { .. } => None,
        }
    }

    /// Does what the socket allows now: reads, answers (with `render` making the
    /// metrics text in the format asked for), writes, drains.
    pub fn advance(&mut self, now: Instant, render: &mut dyn FnMut(Format) -> String) -> Progress {
        if now >= self.deadline {
            return Progress::Done;
        }
        loop {
            let step = match &mut self.stage {
                Stage::Reading(head) => read(&mut self.stream, head, render),
                Stage::Writing { out, sent } => write(&mut self.stream, out, sent),
                Stage::Draining { drained } => drain(&mut self.stream, drained),
            };
            match step {
                Step::Wait => return Progress::Open,
                Step::Close => return Progress::Done,
                Step::Answer(out) => self.stage = Stage::Writing { out, sent: 0 },
                Step::Written => {
                    self.stream.end_writes();
                    self.deadline = self.deadline.min(now + DRAIN_TIME);
                    self.stage = Stage::Draining { drained: 0 };
                }
            }
        }
    }
}

/// What a stage's step came to.
enum Step {
    Wait,
    Close,
    Answer(Vec<u8>),
    Written,
}

/// Reads the head until it is whole, refused, or the socket has no more for now.
fn read<S: Peer>(
    stream: &mut S,
    head: &mut Vec<u8>,
    render: &mut dyn FnMut(Format) -> String,
) -> Step {
    let mut buf = [0u8; 2048];
    loop {
        // read_head refuses a head of MAX_HEAD bytes, so there is always room.
        let room = (MAX_HEAD - head.len()).min(buf.len());
        match stream.read(&mut buf[..room]) {
            // Gone before asking anything.
            Ok(0) => return Step::Close,
            Ok(n) => {
                head.extend_from_slice(&buf[..n]);
                match read_head(head) {
                    Read::Incomplete => {}
                    Read::Scrape(scrape) => {
                        return Step::Answer(answer(scrape, &render(scrape.format)));
                    }
                    Read::Refused(status) => return Step::Answer(refusal(status)),
                }
            }
            Err(e) => match e.kind() {
                ErrorKind::WouldBlock => return Step::Wait,
                ErrorKind::Interrupted => {}
                _ => return Step::Close,
            },
        }
    }
}

/// Writes the answer as far as the socket takes it.
fn write<S: Peer>(stream: &mut S, out: &[u8], sent: &mut usize) -> Step {
    while *sent < out.len() {
        match stream.write(&out[*sent..]) {
            Ok(0) => return Step::Close,
            Ok(n) => *sent += n,
            Err(e) => match e.kind() {
                ErrorKind::WouldBlock => return Step::Wait,
                ErrorKind::Interrupted => {}
                _ => return Step::Close,
            },
        }
    }
    Step::Written
}

/// Reads and throws away until the peer closes, or it has sent [`MAX_DRAIN`] more.
fn drain<S: Peer>(stream: &mut S, drained: &mut usize) -> Step {
    let mut buf = [0u8; 4096];
    loop {
        match stream.read(&mut buf) {
            Ok(0) => return Step::Close,
            Ok(n) => {
                *drained += n;
                if *drained > MAX_DRAIN {
                    return Step::Close;
                }
            }
            Err(e) => match e.kind() {
                ErrorKind::WouldBlock => return Step::Wait,
                ErrorKind::Interrupted => {}
                _ => return Step::Close,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    /// A socket in memory: `incoming` is what the peer sent so far (then WouldBlock,
    /// or end-of-file once `closed`); writes are taken up to `room` bytes.
    #[derive(Default)]
    struct Fake {
        incoming: Vec<u8>,
        read_at: usize,
        /// Bytes the peer sends without end after `incoming`, if any.
        endless: Option<u8>,
        closed: bool,
        room: usize,
        written: Vec<u8>,
        /// Bytes read from it in all.
        delivered: usize,
        ended: Cell<bool>,
    }

    impl io::Read for Fake {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.take(buf)?;
            self.delivered += n;
            Ok(n)
        }
    }

    impl Fake {
        fn take(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let left = &self.incoming[self.read_at..];
            if !left.is_empty() {
                let n = left.len().min(buf.len());
                buf[..n].copy_from_slice(&left[..n]);
                self.read_at += n;
                return Ok(n);
            }
            match (self.endless, self.closed) {
                (Some(b), _) => {
                    buf.fill(b);
                    Ok(buf.len())
                }
                (None, true) => Ok(0),
                (None, false) => Err(ErrorKind::WouldBlock.into()),
            }
        }
    }

    impl io::Write for Fake {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            let n = buf.len().min(self.room);
            if n == 0 {
                return Err(ErrorKind::WouldBlock.into());
            }
            self.room -= n;
            self.written.extend_from_slice(&buf[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    impl Peer for Fake {
        fn end_writes(&self) {
            self.ended.set(true);
        }
    }

    fn peer(sends: &[u8], room: usize) -> Fake {
        Fake {
            incoming: sends.to_vec(),
            room,
            ..Fake::default()
        }
    }

    fn metrics(_: Format) -> String {
        "pgbench_phase 1\n".to_string()
    }

    fn status_of(written: &[u8]) -> &str {
        std::str::from_utf8(&written[9..12]).unwrap()
    }

    #[test]
    fn a_scrape_is_answered_then_drained_until_the_peer_closes() {
        let t = Instant::now();
        let mut c = Connection::new(peer(b"GET /metrics HTTP/1.1\r\n\r\n", 1 << 20), t);
        assert_eq!(c.advance(t, &mut metrics), Progress::Open);
        let s = c.stream();
        assert!(s.ended.get(), "end-of-file sent after the answer");
        assert!(s.written.ends_with(b"\r\n\r\npgbench_phase 1\n"));
        assert_eq!(status_of(&s.written), "200");
        assert!(c.deadline() <= t + DRAIN_TIME);
        c.stream().closed = true;
        assert_eq!(c.advance(t, &mut metrics), Progress::Done);
    }

    #[test]
    fn an_endless_request_line_is_refused_after_max_head_bytes() {
        let mut endless = peer(b"GET /", 1 << 20);
        endless.endless = Some(b'a');
        let t = Instant::now();
        let mut c = Connection::new(endless, t);
        // Answered 414; then at most MAX_DRAIN more bytes are read and it is closed.
        assert_eq!(c.advance(t, &mut metrics), Progress::Done);
        let s = c.stream();
        assert_eq!(status_of(&s.written), "414");
        assert!(
            s.delivered <= MAX_HEAD + MAX_DRAIN + 4096,
            "{} read",
            s.delivered
        );
    }

    #[test]
    fn a_header_block_without_end_is_refused() {
        let mut headers = b"GET /metrics HTTP/1.1\r\n".to_vec();
        while headers.len() < 4 * MAX_HEAD {
            headers.extend_from_slice(b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n");
        }
        let t = Instant::now();
        let mut c = Connection::new(peer(&headers, 1 << 20), t);
        assert_eq!(c.advance(t, &mut metrics), Progress::Open);
        assert_eq!(status_of(&c.stream().written), "431");
    }

    #[test]
    fn a_peer_that_never_reads_is_dropped_at_its_deadline() {
        let t = Instant::now();
        // Pipelined requests, and a socket that takes 100 bytes and no more.
        let requests = b"GET /metrics HTTP/1.1\r\n\r\n".repeat(100);
        let mut c = Connection::new(peer(&requests, 100), t);
        let mut renders = 0;
        let mut counting = |f| {
            renders += 1;
            metrics(f).repeat(100)
        };
        assert_eq!(c.advance(t, &mut counting), Progress::Open);
        assert_eq!(c.eviction_rank(), None, "being answered");
        assert_eq!(
            c.advance(t + Duration::from_secs(5), &mut counting),
            Progress::Open
        );
        assert_eq!(c.deadline(), t + CONNECTION_TIME);
        assert_eq!(c.advance(c.deadline(), &mut counting), Progress::Done);
        assert_eq!(renders, 1, "one request per connection");
        assert_eq!(c.stream().written.len(), 100);
    }

    #[test]
    fn a_peer_gone_before_its_request_is_closed() {
        let t = Instant::now();
        let mut gone = peer(b"GET /met", 0);
        gone.closed = true;
        let mut c = Connection::new(gone, t);
        assert_eq!(c.eviction_rank(), Some((1, t)));
        assert_eq!(c.advance(t, &mut metrics), Progress::Done);
        assert!(c.stream().written.is_empty());
    }
}
