//! Instants as the history keeps them: Unix microseconds, read from the results
//! file's RFC 3339 `started_at` and from what people type after `--since` (a date, a
//! date and time in UTC, or an age such as `7d`). No clock is read here: an age is
//! taken back from the `now` the caller passes.

use crate::HistoryError;

/// Days from 1970-01-01 to `y-m-d` (H. Hinnant's algorithm, the inverse of the
/// results crate's `civil_from_days`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn num(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Unix µs of `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM[:SS[.ffffff]][Z]` (or a space for the
/// `T`); UTC, as the results files write it. `None`: not such a text.
pub fn parse_instant(s: &str) -> Option<i64> {
    let s = s.trim();
    let s = s.strip_suffix('Z').unwrap_or(s);
    let (date, time) = match s.split_once(['T', ' ']) {
        Some((d, t)) => (d, Some(t)),
        None => (s, None),
    };
    let mut parts = date.split('-');
    let (y, m, d) = (
        num(parts.next()?)?,
        num(parts.next()?)?,
        num(parts.next()?)?,
    );
    // Four-digit years, as RFC 3339 has them (a longer one would overflow below).
    if parts.next().is_some()
        || !(0..=9999).contains(&y)
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
    {
        return None;
    }
    let mut us = days_from_civil(y, m as u32, d as u32) * 86_400_000_000;
    if let Some(time) = time {
        let (hms, frac) = match time.split_once('.') {
            Some((a, b)) => (a, Some(b)),
            None => (time, None),
        };
        let fields: Vec<&str> = hms.split(':').collect();
        if !(2..=3).contains(&fields.len()) {
            return None;
        }
        let h = num(fields[0])?;
        let mi = num(fields[1])?;
        let sec = fields.get(2).map_or(Some(0), |f| num(f))?;
        if h > 23 || mi > 59 || sec > 60 {
            return None;
        }
        us += ((h * 60 + mi) * 60 + sec) * 1_000_000;
        if let Some(frac) = frac {
            if frac.is_empty() || frac.len() > 9 || num(frac).is_none() {
                return None;
            }
            let digits = format!("{frac:0<6}");
            us += num(&digits[..6])?;
        }
    }
    Some(us)
}

/// What `--since`/`--until` accept: an instant ([`parse_instant`]) or an age back
/// from `now_us` (`90s`, `30m`, `12h`, `7d`, `2w`).
pub fn parse_since(s: &str, now_us: i64) -> Result<i64, HistoryError> {
    let age = s.char_indices().last().and_then(|(i, unit)| {
        let scale: i64 = match unit {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            _ => return None,
        };
        num(&s[..i])?.checked_mul(scale)?.checked_mul(1_000_000)
    });
    if let Some(us) = age {
        return Ok(now_us.saturating_sub(us));
    }
    parse_instant(s).ok_or_else(|| {
        HistoryError::Invalid(format!(
            "\"{s}\" is not a time: give a date (2026-12-01), a UTC date and time (2026-12-01T08:00:00Z) or an age (12h, 7d, 2w)"
        ))
    })
}

/// Now, as Unix µs (the one clock this crate reads, for ages and `recorded_at`).
pub fn now_us() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// Now in RFC 3339, as the results files write instants.
pub fn rfc3339_now() -> String {
    pgbench_results::document::rfc3339_utc(now_us())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgbench_results::document::rfc3339_utc;

    #[test]
    fn instants_read_back_what_the_results_files_write() {
        for us in [
            0,
            1_764_578_627_123_456,
            951_782_400_000_001,
            -86_400_000_000,
        ] {
            assert_eq!(parse_instant(&rfc3339_utc(us)), Some(us), "{us}");
        }
        assert_eq!(parse_instant("1970-01-02"), Some(86_400_000_000));
        assert_eq!(parse_instant("1970-01-01 00:01"), Some(60_000_000));
        assert_eq!(parse_instant("1970-01-01T00:00:01.5Z"), Some(1_500_000));
        for bad in [
            "",
            "99999999999999-01-01",
            "yesterday",
            "2026-13-01",
            "2026-12-01T25:00",
            "2026-12",
            "1970-01-01T00:00:01.Z",
        ] {
            assert_eq!(parse_instant(bad), None, "{bad}");
        }
    }

    #[test]
    fn ages_count_back_from_now() {
        let now = 10 * 86_400_000_000;
        assert_eq!(parse_since("2d", now).unwrap(), 8 * 86_400_000_000);
        assert_eq!(parse_since("36h", now).unwrap(), now - 36 * 3_600_000_000);
        assert_eq!(parse_since("1970-01-03", now).unwrap(), 2 * 86_400_000_000);
        // Never a panic: empty, a unit after a multibyte character, an overflow.
        for bad in [
            "",
            "d",
            "5éd",
            "é",
            "99999999999999999999d",
            "9999999999999w",
        ] {
            assert!(parse_since(bad, now).is_err(), "{bad}");
        }
        let e = parse_since("soon", now).unwrap_err().to_string();
        assert!(e.contains("\"soon\" is not a time"), "{e}");
    }
}
