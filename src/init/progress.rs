//! The `N of M tuples (P%) done (elapsed X s, remaining Y s)` lines of client-side
//! generation, as pgbench 15's `initGenerateDataClientSide` prints them: every 100,000
//! rows, or with `-q` at most every 5 seconds; `\r` endings and blank padding on a
//! terminal, `\n` otherwise. The caller supplies rows done and elapsed time, so this is
//! testable without a clock or a server.

use std::io::Write;

/// Rows between two lines without `-q` (pgbench prints when `j % 100000 == 0`).
const ROWS_PER_LINE: i64 = 100_000;
/// Seconds between two lines with `-q` (pgbench `LOG_STEP_SECONDS`).
const LOG_STEP_SECONDS: f64 = 5.0;
/// With `-q` pgbench looks at the clock only every 100 rows.
pub(crate) const QUIET_CHECK_ROWS: i64 = 100;

/// Progress state of one generation step.
#[derive(Debug)]
pub(crate) struct Progress<W: Write> {
    out: W,
    /// `\r` when stderr is a terminal, so each line overwrites the previous one.
    eol: u8,
    total: i64,
    quiet: bool,
    /// Next row count that gets a line without `-q`.
    next_mark: i64,
    /// With `-q`: the next line is due once elapsed >= `log_interval * 5` seconds.
    log_interval: f64,
    /// Length of the previous line, to blank out its tail on a terminal.
    prev_chars: usize,
}

impl<W: Write> Progress<W> {
    /// `total` rows will be generated; `tty` selects `\r` line endings.
    pub(crate) fn new(out: W, total: i64, quiet: bool, tty: bool) -> Progress<W> {
        Progress {
            out,
            eol: if tty { b'\r' } else { b'\n' },
            total,
            quiet,
            next_mark: ROWS_PER_LINE,
            log_interval: 1.0,
            prev_chars: 0,
        }
    }

    /// True if a call to [`Progress::advance`] with `rows_done` could print: lets the
    /// single-connection loop skip reading the clock between lines.
    pub(crate) fn due(&self, rows_done: i64) -> bool {
        if self.quiet {
            rows_done % QUIET_CHECK_ROWS == 0 || rows_done >= self.total
        } else {
            rows_done >= self.next_mark
        }
    }

    /// Reports that `rows_done` rows (of all connections together) are written after
    /// `elapsed` seconds. Without `-q` one line is printed for each multiple of 100,000
    /// reached, so several connections' progress reads like one connection's.
    pub(crate) fn advance(&mut self, rows_done: i64, elapsed: f64) {
        if self.quiet {
            if rows_done >= self.total || elapsed >= self.log_interval * LOG_STEP_SECONDS {
                self.line(rows_done, elapsed);
                // pgbench: skip to the next interval.
                self.log_interval = (elapsed / LOG_STEP_SECONDS).ceil();
            }
        } else {
            while self.next_mark <= rows_done.min(self.total) {
                self.line(self.next_mark, elapsed);
                self.next_mark += ROWS_PER_LINE;
            }
        }
    }

    /// Ends the step: on a terminal, moves to the next line.
    pub(crate) fn finish(&mut self) {
        // pgbench ignores failures to write to stderr (fprintf), so do we.
        if self.eol != b'\n' {
            let _ = self.out.write_all(b"\n");
        }
        let _ = self.out.flush();
    }

    fn line(&mut self, j: i64, elapsed: f64) {
        let total = self.total.max(1);
        let percent = (i128::from(j) * 100 / i128::from(total)) as i64;
        let remaining = (self.total as f64 - j as f64) * elapsed / j.max(1) as f64;
        let mut text = format!(
            "{j} of {} tuples ({percent}%) done (elapsed {elapsed:.2} s, remaining {remaining:.2} s)",
            self.total
        );
        let chars = text.len();
        if self.prev_chars > chars {
            text.extend(std::iter::repeat_n(' ', self.prev_chars - chars));
        }
        text.push(self.eol as char);
        self.prev_chars = chars;
        // One write per line, so a server NOTICE never lands inside it.
        let _ = self.out.write_all(text.as_bytes());
    }

    /// The writer, for tests.
    #[cfg(test)]
    pub(crate) fn into_inner(self) -> W {
        self.out
    }
}

/// The line after each unit of a workload's load (a sysbench table, a TPC-C warehouse;
/// stock prints none): its rows, the megabytes sent and their rate, and the time the
/// units left should take at the whole load's rate so far (`elapsed` since it began).
pub(crate) fn unit_line(
    unit: &str,
    (rows, bytes, secs): (i64, u64, f64),
    (done, total, units): (usize, usize, &str),
    elapsed: f64,
) -> String {
    let mb = bytes as f64 / 1e6;
    let left = elapsed / done.max(1) as f64 * (total - done.min(total)) as f64;
    format!(
        "{unit}: {rows} rows, {mb:.1} MB in {secs:.2} s ({:.1} MB/s); {done} of {total} {units}, {left:.1} s left\n",
        mb / secs.max(1e-9)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(p: Progress<Vec<u8>>) -> String {
        String::from_utf8(p.into_inner()).unwrap()
    }

    #[test]
    fn a_line_per_100000_rows() {
        let mut p = Progress::new(Vec::new(), 300_000, false, false);
        for j in (100..=300_000).step_by(100) {
            if p.due(j) {
                p.advance(j, j as f64 / 100_000.0);
            }
        }
        p.finish();
        assert_eq!(
            text(p),
            "100000 of 300000 tuples (33%) done (elapsed 1.00 s, remaining 2.00 s)\n\
             200000 of 300000 tuples (66%) done (elapsed 2.00 s, remaining 1.00 s)\n\
             300000 of 300000 tuples (100%) done (elapsed 3.00 s, remaining 0.00 s)\n"
        );
    }

    #[test]
    fn jumps_print_every_crossed_mark() {
        let mut p = Progress::new(Vec::new(), 300_000, false, false);
        p.advance(250_000, 1.0);
        p.advance(300_000, 2.0);
        assert_eq!(
            text(p)
                .lines()
                .map(|l| l.split(' ').next().unwrap())
                .collect::<Vec<_>>(),
            ["100000", "200000", "300000"]
        );
    }

    #[test]
    fn terminal_lines_overwrite_and_pad() {
        let mut p = Progress::new(Vec::new(), 1_000_000, false, true);
        p.advance(100_000, 1.0); // remaining 9.00 s
        p.advance(200_000, 2.5); // remaining 10.00 s: one longer
        p.advance(300_000, 2.7); // remaining 6.30 s: one shorter, padded
        p.finish();
        assert_eq!(
            text(p),
            "100000 of 1000000 tuples (10%) done (elapsed 1.00 s, remaining 9.00 s)\r\
             200000 of 1000000 tuples (20%) done (elapsed 2.50 s, remaining 10.00 s)\r\
             300000 of 1000000 tuples (30%) done (elapsed 2.70 s, remaining 6.30 s) \r\n"
        );
    }

    #[test]
    fn quiet_prints_every_five_seconds_and_at_the_end() {
        let mut p = Progress::new(Vec::new(), 200_000, true, false);
        assert!(!p.due(150));
        assert!(p.due(200));
        for (j, t) in [
            (100, 0.5),
            (50_000, 4.99),
            (60_000, 5.0),
            (70_000, 7.0),
            (90_000, 10.2),
            (200_000, 11.0),
        ] {
            p.advance(j, t);
        }
        let out = text(p);
        let firsts: Vec<_> = out.lines().map(|l| l.split(' ').next().unwrap()).collect();
        // 5.0 s sets the next interval to ceil(5/5)=1 → 5 s again; 7.0 prints, next at
        // ceil(7/5)=2 → 10 s; 10.2 prints; the last row always prints.
        assert_eq!(firsts, ["60000", "70000", "90000", "200000"]);
        assert!(out.ends_with(
            "200000 of 200000 tuples (100%) done (elapsed 11.00 s, remaining 0.00 s)\n"
        ));
    }

    #[test]
    fn percent_truncates() {
        let mut p = Progress::new(Vec::new(), 300_000, false, false);
        p.advance(200_000, 1.0);
        assert!(text(p).contains("200000 of 300000 tuples (66%)"));
    }

    #[test]
    fn a_unit_line_has_the_rate_and_the_time_left_at_the_rate_so_far() {
        assert_eq!(
            unit_line(
                "warehouse 2",
                (499_000, 40_000_000, 2.0),
                (2, 5, "units"),
                5.0
            ),
            "warehouse 2: 499000 rows, 40.0 MB in 2.00 s (20.0 MB/s); 2 of 5 units, 7.5 s left\n"
        );
        // Nothing done yet or nothing timed: no division by zero, nothing negative.
        assert!(unit_line("items", (0, 0, 0.0), (0, 0, "units"), 0.0)
            .ends_with("0.0 MB in 0.00 s (0.0 MB/s); 0 of 0 units, 0.0 s left\n"));
    }
}
