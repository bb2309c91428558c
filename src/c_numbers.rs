//! The C library's number parsing as pgbench relies on it: `strtol` prefixes (options,
//! weights, `\setshell` output), `atoi` (`--max-tries`, `\sleep :var`) and `atof`
//! (`-R`, `-L`, `--sampling-rate`), with their leniency: leading white space, trailing
//! garbage ignored by `atoi`/`atof`, 0 when nothing parses.

/// C's `isspace` in the C locale.
pub fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// `strtol` without its white-space skip: an optional sign and decimal digits off the
/// front, saturated to i64 as `strtol` saturates; `None` (and the whole input as the
/// rest) when there are no digits.
pub fn strtol_prefix(s: &str) -> (Option<i64>, &str) {
    let bytes = s.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i = 1;
    }
    let digits_start = i;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    if i == digits_start {
        return (None, s);
    }
    let saturated = if bytes[0] == b'-' { i64::MIN } else { i64::MAX };
    (Some(s[..i].parse::<i64>().unwrap_or(saturated)), &s[i..])
}

/// C's `atoi`: a prefix integer after white space, as a C int (wrapped), 0 if none.
pub fn atoi(s: &str) -> i32 {
    strtol_prefix(s.trim_start_matches(is_c_space))
        .0
        .unwrap_or(0) as i32
}

/// C's `atof`: the longest prefix that reads as a number, 0 when there is none.
pub fn atof(s: &str) -> f64 {
    let t = s.trim_start_matches(is_c_space);
    let lower = t.to_ascii_lowercase();
    for (word, v) in [
        ("+infinity", f64::INFINITY),
        ("-infinity", f64::NEG_INFINITY),
        ("infinity", f64::INFINITY),
        ("+inf", f64::INFINITY),
        ("-inf", f64::NEG_INFINITY),
        ("inf", f64::INFINITY),
        ("nan", f64::NAN),
        ("+nan", f64::NAN),
        ("-nan", f64::NAN),
    ] {
        if lower.starts_with(word) {
            return v;
        }
    }
    let b = t.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let mantissa_start = i;
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    if i < b.len() && b[i] == b'.' {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if i == mantissa_start || (i == mantissa_start + 1 && b[mantissa_start] == b'.') {
        return 0.0;
    }
    let mut end = i;
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        let mut j = i + 1;
        if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
            j += 1;
        }
        let exp_digits = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j > exp_digits {
            end = j;
        }
    }
    t[..end].parse().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_and_leniency() {
        assert_eq!(strtol_prefix("42\n"), (Some(42), "\n"));
        assert_eq!(strtol_prefix("-7x"), (Some(-7), "x"));
        assert_eq!(strtol_prefix("x"), (None, "x"));
        assert_eq!(strtol_prefix("99999999999999999999"), (Some(i64::MAX), ""));
        assert_eq!(strtol_prefix("-99999999999999999999"), (Some(i64::MIN), ""));
        assert_eq!(atoi(" 12ms"), 12);
        assert_eq!(atoi("abc"), 0);
        assert_eq!(atoi("-1"), -1);
        assert_eq!(atof("0.05"), 0.05);
        assert_eq!(atof("12abc"), 12.0);
        assert_eq!(atof("abc"), 0.0);
        assert_eq!(atof(" -1e3x"), -1000.0);
        assert_eq!(atof("1e"), 1.0);
    }
}
