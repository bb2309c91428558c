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
        // A walk over what is left, not indexes into the buffer: the slice's length
        // bounds every step, so no overflow check of an index is left in a loop run
        // once per row (20 instructions a row before, 300 rows per transaction).
        let mut rest = &self.buf[self.start..self.end];
        let (mut skipped, mut last_len) = (0, 0);
        while let [b'D', l0, l1, l2, l3, ..] = *rest {
            let len = u32::from_be_bytes([l0, l1, l2, l3]) as usize;
            // Anything else, a short length word included, is next_message's to judge.
            if len < 4 || rest.len() <= len {
                break;
            }
            rest = &rest[1 + len..];
            last_len = len;
            skipped += 1;
        }
        if skipped == 0 {
            return (0, start, end);
        }
        // The last row taken ends where the rest begins.
        let at = self.end - rest.len();
        self.start = at;
        (skipped, at - (last_len - 4), at)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn message(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut m = vec![tag];
        m.extend_from_slice(&(body.len() as u32 + 4).to_be_bytes());
        m.extend_from_slice(body);
        m
    }

    /// A DataRow of one text column of `n` bytes (`None`: a row of no columns).
    fn row(n: Option<usize>) -> Vec<u8> {
        match n {
            None => message(b'D', &[0, 0]),
            Some(n) => {
                let mut body = vec![0, 1];
                body.extend_from_slice(&(n as u32).to_be_bytes());
                body.extend((0..n).map(|i| (i * 7 + n) as u8));
                message(b'D', &body)
            }
        }
    }

    /// What the receive loop makes of `stream` arriving as `chunks` (byte counts,
    /// the rest after them): per result, the rows counted and the last one's body,
    /// then the other messages' types; or the malformed header met.
    #[allow(clippy::type_complexity)]
    fn receive(
        stream: &[u8],
        chunks: &[usize],
    ) -> (Vec<(usize, Vec<u8>)>, Vec<u8>, Option<(u8, usize)>) {
        let mut rb = ReadBuf::new();
        let (mut results, mut others) = (Vec::new(), Vec::new());
        let (mut rows, mut last) = (0, Vec::new());
        let mut fed = 0;
        let mut chunks = chunks.iter().copied();
        loop {
            match rb.next_message() {
                Framed::Message {
                    tag: b'D',
                    start,
                    end,
                } => {
                    let (skipped, start, end) = rb.skip_to_last_row(start, end);
                    rows += 1 + skipped;
                    last = rb.body(start, end).to_vec();
                }
                Framed::Message { tag, .. } => {
                    if rows > 0 {
                        results.push((rows, std::mem::take(&mut last)));
                        rows = 0;
                    }
                    others.push(tag);
                }
                Framed::Malformed { tag, len } => return (results, others, Some((tag, len))),
                Framed::Incomplete => {
                    if fed == stream.len() {
                        return (results, others, None);
                    }
                    let upto = chunks
                        .next()
                        .map_or(stream.len(), |n| (fed + n).min(stream.len()));
                    rb.room_to_read();
                    let space = rb.space();
                    let n = space.len().min(upto - fed);
                    space[..n].copy_from_slice(&stream[fed..fed + n]);
                    rb.filled(n);
                    fed += n;
                }
            }
        }
    }

    /// Two results of rows of many lengths (a row of no columns, empty values, rows
    /// longer than the first buffer) between other messages.
    fn stream() -> (Vec<u8>, Vec<(usize, Vec<u8>)>) {
        let mut s = message(b'T', b"\0\0");
        let lens: Vec<Option<usize>> = (0..40)
            .map(|i| if i % 13 == 5 { None } else { Some(i * 37 % 90) })
            .chain([Some(5000), Some(0)])
            .collect();
        for &n in &lens {
            s.extend(row(n));
        }
        s.extend(message(b'C', b"SELECT 42\0"));
        s.extend(message(b'T', b"\0\0"));
        for &n in &lens[..3] {
            s.extend(row(n));
        }
        s.extend(message(b'C', b"SELECT 3\0"));
        s.extend(message(b'Z', b"I"));
        let body = |n| row(n)[5..].to_vec();
        (s, vec![(42, body(Some(0))), (3, body(lens[2]))])
    }

    #[test]
    fn rows_counted_and_the_last_kept_however_the_bytes_arrive() {
        let (s, want) = stream();
        let others = b"TCTCZ".to_vec();
        assert_eq!(receive(&s, &[]), (want.clone(), others.clone(), None));
        for cut in 0..=s.len() {
            assert_eq!(
                receive(&s, &[cut]),
                (want.clone(), others.clone(), None),
                "cut at {cut}"
            );
        }
        for step in [1, 2, 3, 5, 7, 64] {
            let chunks = vec![step; s.len()];
            assert_eq!(
                receive(&s, &chunks),
                (want.clone(), others.clone(), None),
                "{step}"
            );
        }
    }

    #[test]
    fn a_bad_header_after_rows_is_left_for_next_message() {
        // A DataRow whose length word is below 4 ends the walk; next_message calls it
        // malformed, after the rows before it were all counted.
        let mut s = row(Some(3));
        s.extend(row(Some(1)));
        s.extend([b'D', 0, 0, 0, 3]);
        for cut in 0..=s.len() {
            let (results, others, bad) = receive(&s, &[cut]);
            assert!(results.is_empty() && others.is_empty(), "cut at {cut}");
            assert_eq!(bad, Some((b'D', 3)), "cut at {cut}");
        }
        let (mut rb, start, end) = first_row(&s);
        assert_eq!(rb.skip_to_last_row(start, end), (1, 19, 26));
        assert_eq!(rb.body(19, 26), &row(Some(1))[5..]);
        assert!(matches!(
            rb.next_message(),
            Framed::Malformed { tag: b'D', len: 3 }
        ));
    }

    /// A read buffer holding `s`, as if one read had brought it, with its first
    /// message, a DataRow, framed: the buffer and the row's body.
    fn first_row(s: &[u8]) -> (ReadBuf, usize, usize) {
        let mut rb = ReadBuf::new();
        rb.space()[..s.len()].copy_from_slice(s);
        rb.filled(s.len());
        let Framed::Message {
            tag: b'D',
            start,
            end,
        } = rb.next_message()
        else {
            panic!("a row first");
        };
        (rb, start, end)
    }

    #[test]
    fn every_short_length_word_stops_the_walk_and_an_empty_row_does_not() {
        for bad in 0..4u8 {
            let mut s = row(Some(2));
            // A message of length word 4, no body: a row as far as framing goes.
            s.extend(message(b'D', b""));
            s.extend([b'D', 0, 0, 0, bad]);
            let (mut rb, start, end) = first_row(&s);
            assert_eq!(rb.skip_to_last_row(start, end), (1, 18, 18), "{bad}");
            assert!(
                matches!(rb.next_message(), Framed::Malformed { tag: b'D', len } if len == bad as usize),
                "{bad}"
            );
        }
    }

    #[test]
    fn a_lone_row_is_its_own_last() {
        let s = [row(Some(2)), message(b'C', b"SELECT 1\0")].concat();
        let (mut rb, start, end) = first_row(&s);
        assert_eq!(rb.skip_to_last_row(start, end), (0, start, end));
        assert!(matches!(
            rb.next_message(),
            Framed::Message { tag: b'C', .. }
        ));
    }
}
