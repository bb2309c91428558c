//! COPY text rows for the three generated tables, written into a reused byte buffer.
//! The account rows are pgbench's `aid\tbid\t0\t\n` (empty filler, blank-padded by the
//! server); numbers are kept as ASCII counters and incremented in place, since the
//! client formats hundreds of millions of them at large scales. Pure: no connection.

use super::sql::{ACCOUNTS, TELLERS};

/// A non-negative decimal number kept as ASCII digits, incremented in place.
#[derive(Debug, Clone)]
struct AsciiCounter {
    /// Right-aligned digits; `digits[start..]` is the number.
    digits: [u8; 20],
    start: usize,
}

impl AsciiCounter {
    fn new(value: i64) -> AsciiCounter {
        let mut digits = [b'0'; 20];
        let mut start = digits.len();
        let mut v = value.max(0) as u64;
        loop {
            start -= 1;
            digits[start] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        AsciiCounter { digits, start }
    }

    fn as_bytes(&self) -> &[u8] {
        &self.digits[self.start..]
    }

    fn increment(&mut self) {
        let mut i = self.digits.len();
        while i > self.start {
            i -= 1;
            if self.digits[i] == b'9' {
                self.digits[i] = b'0';
            } else {
                self.digits[i] += 1;
                return;
            }
        }
        // Carried out of every digit: one more position, e.g. 999 -> 1000.
        self.start -= 1;
        self.digits[self.start] = b'1';
    }
}

/// Writes `pgbench_accounts` rows for consecutive `aid`s.
#[derive(Debug, Clone)]
pub struct AccountRows {
    next_aid: i64,
    last_aid: i64,
    aid: AsciiCounter,
    bid: AsciiCounter,
    /// `aid` at which `bid` next increases.
    next_bid_change: i64,
}

impl AccountRows {
    /// Rows `first..=last` (1-based `aid`s).
    pub fn new(first: i64, last: i64) -> AccountRows {
        let bid = (first - 1) / ACCOUNTS + 1;
        AccountRows {
            next_aid: first,
            last_aid: last,
            aid: AsciiCounter::new(first),
            bid: AsciiCounter::new(bid),
            next_bid_change: bid * ACCOUNTS + 1,
        }
    }

    /// Rows not yet written.
    pub fn remaining(&self) -> i64 {
        (self.last_aid - self.next_aid + 1).max(0)
    }

    /// Appends up to `max` rows to `buf`; returns how many were written.
    pub fn write(&mut self, buf: &mut Vec<u8>, max: i64) -> i64 {
        let n = max.min(self.remaining());
        for _ in 0..n {
            if self.next_aid == self.next_bid_change {
                self.bid.increment();
                self.next_bid_change += ACCOUNTS;
            }
            buf.extend_from_slice(self.aid.as_bytes());
            buf.push(b'\t');
            buf.extend_from_slice(self.bid.as_bytes());
            buf.extend_from_slice(b"\t0\t\n");
            self.aid.increment();
            self.next_aid += 1;
        }
        n
    }
}

/// Appends `pgbench_branches` rows `bid\t0\n` for `COPY ...(bid,bbalance)`, `bid`s
/// `first..=last`.
pub(crate) fn branch_rows(buf: &mut Vec<u8>, first: i64, last: i64) {
    let mut bid = AsciiCounter::new(first);
    for _ in first..=last {
        buf.extend_from_slice(bid.as_bytes());
        buf.extend_from_slice(b"\t0\n");
        bid.increment();
    }
}

/// Appends `pgbench_tellers` rows `tid\tbid\t0\n` for `COPY ...(tid,bid,tbalance)`,
/// `tid`s `first..=last`.
pub(crate) fn teller_rows(buf: &mut Vec<u8>, first: i64, last: i64) {
    let mut tid = AsciiCounter::new(first);
    let mut bid = AsciiCounter::new((first - 1) / TELLERS + 1);
    let mut next_bid_change = ((first - 1) / TELLERS + 1) * TELLERS + 1;
    for t in first..=last {
        if t == next_bid_change {
            bid.increment();
            next_bid_change += TELLERS;
        }
        buf.extend_from_slice(tid.as_bytes());
        buf.push(b'\t');
        buf.extend_from_slice(bid.as_bytes());
        buf.extend_from_slice(b"\t0\n");
        tid.increment();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference_accounts(first: i64, last: i64) -> String {
        (first..=last)
            .map(|aid| format!("{}\t{}\t0\t\n", aid, (aid - 1) / 100_000 + 1))
            .collect()
    }

    #[test]
    fn counter_carries() {
        for start in [0i64, 8, 9, 99, 999_999, 1_999_999_999, 99_999_999_999] {
            let mut c = AsciiCounter::new(start);
            for v in start..start + 3 {
                assert_eq!(c.as_bytes(), v.to_string().as_bytes());
                c.increment();
            }
        }
    }

    #[test]
    fn account_rows_match_printf_format() {
        for (first, last) in [(1, 250_000), (99_990, 100_011), (299_999, 300_001)] {
            let mut rows = AccountRows::new(first, last);
            let mut buf = Vec::new();
            let mut written = 0;
            while rows.remaining() > 0 {
                written += rows.write(&mut buf, 7_777);
            }
            assert_eq!(written, last - first + 1);
            assert_eq!(
                String::from_utf8(buf).unwrap(),
                reference_accounts(first, last)
            );
        }
    }

    #[test]
    fn account_rows_stop_at_last() {
        let mut rows = AccountRows::new(5, 6);
        let mut buf = Vec::new();
        assert_eq!(rows.write(&mut buf, 10), 2);
        assert_eq!(rows.write(&mut buf, 10), 0);
        assert_eq!(buf, b"5\t1\t0\t\n6\t1\t0\t\n");
    }

    #[test]
    fn big_aids_keep_counting() {
        let mut rows = AccountRows::new(2_147_483_646, 2_147_483_649);
        let mut buf = Vec::new();
        rows.write(&mut buf, 10);
        assert_eq!(
            String::from_utf8(buf).unwrap(),
            reference_accounts(2_147_483_646, 2_147_483_649)
        );
    }

    #[test]
    fn branch_and_teller_rows() {
        let mut buf = Vec::new();
        branch_rows(&mut buf, 1, 3);
        assert_eq!(buf, b"1\t0\n2\t0\n3\t0\n");
        let mut buf = Vec::new();
        teller_rows(&mut buf, 1, 25);
        let expected: String = (1..=25)
            .map(|t| format!("{}\t{}\t0\n", t, (t - 1) / 10 + 1))
            .collect();
        assert_eq!(String::from_utf8(buf).unwrap(), expected);
        let mut buf = Vec::new();
        teller_rows(&mut buf, 20, 21);
        assert_eq!(buf, b"20\t2\t0\n21\t3\t0\n");
    }
}
