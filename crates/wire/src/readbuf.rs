//! The read buffer: the bytes received and not yet parsed, reused for the whole
//! connection, and framing the complete messages in it. No I/O: `receive` fills it.

use crate::message_caps::{may_be_long, MAX_SHORT_LEN};

/// The bytes received and not yet parsed: `buf[start..end]`. Reused for the whole
/// connection; it only grows, and only as bytes actually arrive.
pub(crate) struct ReadBuf {
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

/// What the front of the read buffer holds.
pub(crate) enum Framed {
    /// A complete message: its type and its body's bounds (see `ReadBuf::body`).
    Message { tag: u8, start: usize, end: usize },
    /// A header no message of the protocol can have: the session is out of sync.
    Malformed { tag: u8, len: usize },
    /// Not a whole message yet (room for the rest was made).
    Incomplete,
}

impl ReadBuf {
    pub(crate) fn new() -> ReadBuf {
        // Small at first, doubled while a reply needs more: a zeroed buffer is touched
        // memory, and 1,000 clients of 16 KiB each would cost 16 MB for replies that
        // mostly fit in a few hundred bytes.
        ReadBuf {
            buf: vec![0; 4096],
            start: 0,
            end: 0,
        }
    }

    /// The bytes not parsed yet.
    #[inline]
    pub(crate) fn unread(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// A message body, by the bounds `take` gave.
    #[inline]
    pub(crate) fn body(&self, start: usize, end: usize) -> &[u8] {
        &self.buf[start..end]
    }

    /// Takes the message of length word `len` at the front (complete in the buffer):
    /// its body's bounds, valid until the buffer next changes.
    #[inline]
    pub(crate) fn take(&mut self, len: usize) -> (usize, usize) {
        let at = self.start;
        self.start = at + 1 + len;
        (at + 5, at + 1 + len)
    }

    /// Takes the complete message at the front, if there is one. Room for the rest of
    /// an incomplete one is made by moving it to the front, never by trusting its
    /// length: the buffer grows only once what arrived fills it.
    #[inline]
    pub(crate) fn next_message(&mut self) -> Framed {
        let avail = self.end - self.start;
        if avail >= 5 {
            let at = self.start;
            let (tag, len) = self.header_at(at);
            if len < 4 || (len > MAX_SHORT_LEN && !may_be_long(tag)) {
                return Framed::Malformed { tag, len };
            }
            if avail > len {
                self.start = at + 1 + len;
                return Framed::Message {
                    tag,
                    start: at + 5,
                    end: at + 1 + len,
                };
            }
            if at > 0 && self.buf.len() - at < len + 1 {
                self.make_room(0);
            }
        }
        Framed::Incomplete
    }

    /// Given the bounds of a DataRow just taken, takes the complete DataRows that
    /// follow it in the buffer as well: how many it took, and the last one's bounds.
    /// Only the last row of a result is ever looked at, so the rows before it need
    /// only be counted, not copied (a 100-row range query is 100 messages).
    #[inline]
    pub(crate) fn skip_to_last_row(&mut self, start: usize, end: usize) -> (usize, usize, usize) {
        let buf = &self.buf[..self.end];
        let (mut at, mut skipped, mut last) = (self.start, 0, (start, end));
        while let Some(h) = buf.get(at..at + 5) {
            let len = u32::from_be_bytes([h[1], h[2], h[3], h[4]]) as usize;
            // Anything else, a short length word included, is next_message's to judge.
            if h[0] != b'D' || len < 4 || buf.len() - at <= len {
                break;
            }
            last = (at + 5, at + 1 + len);
            at += 1 + len;
            skipped += 1;
        }
        self.start = at;
        (skipped, last.0, last.1)
    }

    /// The type and length word of the message header at `at` (5 bytes buffered).
    #[inline]
    fn header_at(&self, at: usize) -> (u8, usize) {
        let b = &self.buf[at..at + 5];
        (b[0], u32::from_be_bytes([b[1], b[2], b[3], b[4]]) as usize)
    }

    /// The header of the message at the front, once 5 bytes are there.
    #[inline]
    pub(crate) fn header(&self) -> Option<(u8, usize)> {
        (self.end - self.start >= 5).then(|| self.header_at(self.start))
    }

    /// Walks the complete messages buffered: true at the first whose type `done`
    /// accepts (or a malformed header), false at the end of what is there.
    pub(crate) fn scan(&self, mut done: impl FnMut(u8) -> bool) -> bool {
        let mut at = self.start;
        while self.end - at >= 5 {
            let (tag, len) = self.header_at(at);
            if len < 4 {
                return true;
            }
            if self.end - at < len + 1 {
                return false;
            }
            if done(tag) {
                return true;
            }
            at += 1 + len;
        }
        false
    }

    /// Doubles a full buffer (moving unread bytes to the front).
    pub(crate) fn grow(&mut self) {
        self.make_room(self.buf.len() * 2);
    }

    /// How many bytes are buffered past the front, parsed or not (to tell whether a
    /// read got any).
    #[inline]
    pub(crate) fn end(&self) -> usize {
        self.end
    }

    /// Moves unread bytes to the front and grows the buffer to hold `need` bytes.
    fn make_room(&mut self, need: usize) {
        self.buf.copy_within(self.start..self.end, 0);
        self.end -= self.start;
        self.start = 0;
        if self.buf.len() < need {
            self.buf.resize(need.next_power_of_two(), 0);
        }
    }

    /// Room after the unparsed bytes for the next read, whoever does it: an emptied
    /// buffer starts again at the front, a full one is compacted and doubled.
    #[inline]
    pub(crate) fn room_to_read(&mut self) {
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        } else if self.is_full() {
            self.make_room(self.buf.len() * 2);
        }
    }

    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.end == self.buf.len()
    }

    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// Where the next read goes (call `room_to_read` first).
    #[inline]
    pub(crate) fn space(&mut self) -> &mut [u8] {
        &mut self.buf[self.end..]
    }

    /// `n` bytes were read into `space` (by a read given it, so they fit).
    #[inline]
    pub(crate) fn filled(&mut self, n: usize) {
        self.end += n;
    }

    /// A caller says it received `n` bytes into `space`: at most what fits is kept.
    #[inline]
    pub(crate) fn received(&mut self, n: usize) {
        self.end = (self.end + n).min(self.buf.len());
    }
}
