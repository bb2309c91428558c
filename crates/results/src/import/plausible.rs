//! What an imported figure may be: the numbers the importers accept are those the
//! tool could have printed. A count is a whole number from 0 up to what the tool
//! counts in (a client or thread count fits pgbench's C int); a latency, rate or time
//! is finite and not negative; a run lasts no longer than pgbench's `-T` can ask for.
//! Anything else is a damaged or edited file, refused with its line rather than
//! turned into a results file that `compare` and `html` would then believe.

/// Clients, threads, virtual users: pgbench keeps them in a C int.
pub const MAX_CLIENTS: i64 = i32::MAX as i64;

/// The longest run, seconds: pgbench's `-T` is a C int of seconds (68 years).
pub const MAX_DURATION_S: f64 = i32::MAX as f64;

/// `text` as a count from 0 to `max`; the message says why not.
pub fn count(text: &str, what: &str, max: i64, tool: &str) -> Result<i64, String> {
    let text = text.trim();
    let n: i64 = match text.parse() {
        Ok(n) => n,
        // A number too large for an i64 is still a number: say it is out of range.
        Err(_) if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) => {
            return Err(format!("{what} is {text}, not a count {tool} prints"));
        }
        Err(_) => return Err(format!("cannot read {what}")),
    };
    if (0..=max).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{what} is {n}, not a count {tool} prints"))
    }
}

/// `text` as a latency, rate or time: finite and not negative.
pub fn figure(text: &str, what: &str, tool: &str) -> Result<f64, String> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("cannot read {what}"))?;
    checked(v, what, tool)
}

/// `v` if it is finite and not negative.
pub fn checked(v: f64, what: &str, tool: &str) -> Result<f64, String> {
    if v.is_finite() && v >= 0.0 {
        Ok(v)
    } else {
        Err(format!("{what} is {v}, not a figure {tool} prints"))
    }
}

/// `v` seconds as the length of a run: a [`checked`] figure no longer than
/// [`MAX_DURATION_S`].
pub fn duration_s(v: f64, what: &str, tool: &str) -> Result<f64, String> {
    let v = checked(v, what, tool)?;
    if v <= MAX_DURATION_S {
        Ok(v)
    } else {
        Err(format!(
            "{what} is {v} s, longer than any run (pgbench's -T is at most {MAX_DURATION_S} s)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_whole_and_in_range() {
        assert_eq!(count(" 12 ", "x", 100, "pgbench"), Ok(12));
        assert_eq!(
            count("-1799", "transactions", i64::MAX, "sysbench"),
            Err("transactions is -1799, not a count sysbench prints".into())
        );
        assert_eq!(
            count("99999999999999999999", "x", i64::MAX, "pgbench"),
            Err("x is 99999999999999999999, not a count pgbench prints".into())
        );
        assert_eq!(
            count("4294967295", "virtual users", MAX_CLIENTS, "HammerDB"),
            Err("virtual users is 4294967295, not a count HammerDB prints".into())
        );
        assert_eq!(
            count("1e3", "x", 10_000, "pgbench"),
            Err("cannot read x".into())
        );
    }

    #[test]
    fn figures_are_finite_and_not_negative() {
        assert_eq!(figure("0.5", "tps", "pgbench"), Ok(0.5));
        for bad in ["nan", "NaN", "inf", "-inf", "Infinity", "-0.5"] {
            let e = figure(bad, "tps", "pgbench").unwrap_err();
            assert!(e.ends_with("not a figure pgbench prints"), "{bad}: {e}");
        }
        assert_eq!(
            figure("fast", "tps", "pgbench"),
            Err("cannot read tps".into())
        );
        assert!(duration_s(5.0, "duration", "pgbench").is_ok());
        assert!(duration_s(6e13, "test period", "HammerDB")
            .unwrap_err()
            .contains("longer than any run"));
    }
}
