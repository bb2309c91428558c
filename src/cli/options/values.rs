//! Reading one option's value as pgbench does: `option_parse_int`'s integers, `NAME@W`
//! weights, `-I` steps, seeds, and pgbench-rs's percentile lists.

use super::error::ConfigError;
use pgbench_script::cnum::{is_c_space, strtol_prefix};
use pgbench_script::prng;

/// C's `strtol`-based `option_parse_int` (fe_utils/option_utils.c): trailing white
/// space is allowed, anything else after the number is not; out-of-int range is a
/// range error.
pub fn parse_int(
    value: &str,
    option: &'static str,
    min: i64,
    max: i64,
) -> Result<i64, ConfigError> {
    let (num, rest) = strtol_prefix(value.trim_start_matches(is_c_space));
    // With no digits strtol leaves endptr at the start and returns 0.
    let rest = if num.is_some() { rest } else { value };
    if !rest.trim_start_matches(is_c_space).is_empty() {
        return Err(ConfigError::InvalidValue {
            option,
            value: value.to_string(),
        });
    }
    let v = num.unwrap_or(0);
    let in_int = v >= i64::from(i32::MIN) && v <= i64::from(i32::MAX);
    if !in_int || v < min || v > max {
        return Err(ConfigError::OutOfRange { option, min, max });
    }
    Ok(v)
}

/// [`parse_int`] for options whose range is `min..INT_MAX`.
pub fn parse_positive(value: &str, option: &'static str, min: i64) -> Result<i64, ConfigError> {
    parse_int(value, option, min, i64::from(i32::MAX))
}

/// `parseScriptWeight`: `NAME@W` splits at the last `@`.
pub fn parse_script_weight(option: &str) -> Result<(&str, i64), ConfigError> {
    let Some(at) = option.rfind('@') else {
        return Ok((option, 1));
    };
    let (name, spec) = (&option[..at], &option[at..]);
    let (num, rest) = strtol_prefix(spec[1..].trim_start_matches(is_c_space));
    let Some(w) = num.filter(|_| rest.is_empty()) else {
        return Err(ConfigError::WeightSpec(spec.to_string()));
    };
    if !(0..=i64::from(i32::MAX)).contains(&w) {
        return Err(ConfigError::WeightRange { weight: w });
    }
    Ok((name, w))
}

/// `--latency-percentiles[=LIST]`; no list means 50,90,99,99.9,99.99.
pub fn parse_percentiles(list: &str) -> Result<Vec<f64>, ConfigError> {
    if list.is_empty() {
        return Ok(vec![50.0, 90.0, 99.0, 99.9, 99.99]);
    }
    list.split(',')
        .map(|item| match item.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => Ok(p),
            _ => Err(ConfigError::Percentile(item.to_string())),
        })
        .collect()
}

/// pgbench-rs's `--worker=I/N`: two unsigned decimal integers, `N >= 1`, `I < N`.
pub fn parse_worker(value: &str) -> Result<(u32, u32), ConfigError> {
    let refuse = |why| ConfigError::Worker {
        value: value.to_string(),
        why,
    };
    let number = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit())
            .then(|| s.parse::<u32>().ok())
            .flatten()
    };
    let Some((index, count)) = value
        .split_once('/')
        .and_then(|(i, n)| Some((number(i)?, number(n)?)))
    else {
        return Err(refuse(
            "expecting I/N, this process's index I (0 to N-1) and the number of workers N",
        ));
    };
    if count == 0 {
        return Err(refuse("the number of workers N must be at least 1"));
    }
    if index >= count {
        return Err(refuse(
            "the worker index I must be less than N (it counts from 0)",
        ));
    }
    Ok((index, count))
}

/// `checkInitSteps`.
pub fn check_init_steps(steps: &str) -> Result<(), ConfigError> {
    if steps.is_empty() {
        return Err(ConfigError::NoInitSteps);
    }
    match steps.chars().find(|c| !"dtgGvpf ".contains(*c)) {
        Some(c) => Err(ConfigError::InitStep(c)),
        None => Ok(()),
    }
}

/// Whether a seed option names one number (the same wherever it is given), not the
/// clock or the random source.
pub fn seed_is_number(value: &str) -> bool {
    matches!(prng::SeedSpec::parse(value), Ok(prng::SeedSpec::Value(_)))
}

/// pgbench's `set_random_seed` for a given value; `source_name` says where it came from.
pub fn parse_seed(value: &str, source_name: &'static str) -> Result<u64, ConfigError> {
    let seed = prng::SeedSpec::parse(value)
        .and_then(|spec| spec.resolve(crate::sys::time_seed, crate::sys::urandom_u64));
    seed.map_err(|e| ConfigError::Seed {
        message: e.to_string(),
        detail: e.detail().map(str::to_string),
        source_name,
    })
}
