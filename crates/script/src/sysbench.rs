//! sysbench 1.0's random numbers (`sb_rand.c`), drawn from pgbench's generator: the
//! distributions of `--rand-type` (`gaussian`, `special`, `pareto`; `uniform` is
//! pgbench's `random()`) and the `#`/`@` templates of `sysbench.rand.string`. These
//! back pgbench-rs's extra functions `sb_gaussian`, `sb_special` and `sb_pareto`,
//! the extra meta-command `\setrandstr`, and the values of `--workload` prepare. The
//! arithmetic is sysbench's (doubles, then truncation to `uint32_t`), so the shapes
//! are its; the draws themselves come from the client's pg_prng, not sysbench's
//! xoroshiro128+.

use crate::error::EvalError;
use crate::prng::Prng;

/// The `uint32_t` range sysbench's generators take their bounds in.
const MAX_BOUND: i64 = u32::MAX as i64;

/// Checks `lb <= ub` inside `uint32_t`, as sysbench's bounds are.
fn bounds(lb: i64, ub: i64) -> Result<(u32, u32), EvalError> {
    if lb > ub {
        return Err(EvalError::EmptyRange);
    }
    if lb < 0 || ub > MAX_BOUND {
        return Err(EvalError::SysbenchRange);
    }
    Ok((lb as u32, ub as u32))
}

/// `sb_rand_gaussian`: the mean of `iter` uniform draws over `[a, b]`.
pub fn gaussian(rng: &mut Prng, lb: i64, ub: i64, iter: i64) -> Result<i64, EvalError> {
    let (a, b) = bounds(lb, ub)?;
    let iter = check_iter(iter)?;
    let t = f64::from(b - a) + 1.0;
    let sum: f64 = (0..iter).map(|_| rng.double() * t).sum();
    Ok(i64::from(a) + (sum * (1.0 / f64::from(iter))) as u32 as i64)
}

/// `sb_rand_special`: `res` percent of the values fall uniformly on the `pct` percent
/// of `[a, b]` around its middle, the rest are gaussian (`iter` draws) over it all.
pub fn special(
    rng: &mut Prng,
    lb: i64,
    ub: i64,
    pct: i64,
    res: i64,
    iter: i64,
) -> Result<i64, EvalError> {
    let (a, b) = bounds(lb, ub)?;
    let iter = check_iter(iter)?;
    if !(0..100).contains(&res) || !(0..=100).contains(&pct) {
        return Err(EvalError::SysbenchSpecial);
    }
    let t = f64::from(b - a);
    let range_size = t * (100.0 / (100.0 - res as f64));
    let rnd = rng.double();
    if rnd * range_size < t {
        let sum: f64 = (0..iter).map(|_| rng.double()).sum();
        return Ok(to_u32(f64::from(a) + sum * t * (1.0 / f64::from(iter))));
    }
    let d = t * (pct as f64 / 100.0);
    let res = rnd * (d + 1.0) + t / 2.0 - t * (pct as f64 / 200.0);
    Ok(i64::from(a) + i64::from(res as u32))
}

/// `sb_rand_pareto` with parameter `h` in `(0, 1)`.
pub fn pareto(rng: &mut Prng, lb: i64, ub: i64, h: f64) -> Result<i64, EvalError> {
    let (a, b) = bounds(lb, ub)?;
    if !(h > 0.0 && h < 1.0) {
        return Err(EvalError::SysbenchPareto(h));
    }
    let power = h.ln() / (1.0 - h).ln();
    let t = f64::from(b - a) + 1.0;
    Ok(i64::from(a) + (t * rng.double().powf(power)) as u32 as i64)
}

/// `sb_rand_str`: each `#` becomes a digit, each `@` a lower-case letter, the rest
/// stays; appended to `out`. Byte by byte (a workload's `c` and `pad` are 180 bytes a
/// row): `#` and `@` are ASCII, never inside a longer UTF-8 sequence, so replacing
/// them with ASCII leaves the text valid.
pub fn rand_str(rng: &mut Prng, template: &str, out: &mut String) {
    let mut bytes = std::mem::take(out).into_bytes();
    bytes.extend(template.bytes().map(|b| match b {
        b'#' => b'0' + rng.uniform_range(0, 9) as u8,
        b'@' => b'a' + rng.uniform_range(0, 25) as u8,
        other => other,
    }));
    *out = String::from_utf8(bytes)
        .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
}

/// `--rand-spec-iter`: at least one draw.
fn check_iter(iter: i64) -> Result<u32, EvalError> {
    u32::try_from(iter)
        .ok()
        .filter(|&n| n > 0)
        .ok_or(EvalError::SysbenchIterations(iter))
}

/// C's conversion of a double in range to `uint32_t` (truncation).
fn to_u32(v: f64) -> i64 {
    i64::from(v as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn draws(f: impl Fn(&mut Prng) -> i64) -> Vec<i64> {
        let mut rng = Prng::seed(42);
        (0..200_000).map(|_| f(&mut rng)).collect()
    }

    #[test]
    fn gaussian_stays_in_range_and_centres() {
        let v = draws(|r| gaussian(r, 1, 10_000, 12).unwrap());
        assert!(v.iter().all(|&x| (1..=10_000).contains(&x)));
        let mean = v.iter().sum::<i64>() as f64 / v.len() as f64;
        assert!((mean - 5000.5).abs() < 30.0, "{mean}");
    }

    #[test]
    fn special_puts_res_percent_on_pct_percent_in_the_middle() {
        // sysbench's defaults: 75% of values on the middle 1% of [1, 10000].
        let v = draws(|r| special(r, 1, 10_000, 1, 75, 12).unwrap());
        assert!(v.iter().all(|&x| (1..=10_000).contains(&x)));
        let hot = v.iter().filter(|&&x| (4951..=5051).contains(&x)).count();
        let share = hot as f64 / v.len() as f64;
        // 75% uniform there, plus the gaussian's little share of that band
        assert!((0.75..0.80).contains(&share), "{share}");
    }

    #[test]
    fn pareto_favours_the_low_end() {
        let v = draws(|r| pareto(r, 1, 10_000, 0.2).unwrap());
        assert!(v.iter().all(|&x| (1..=10_000).contains(&x)));
        // h = 0.2: 80% of the values in the lowest 20% of the range
        let low = v.iter().filter(|&&x| x <= 2_000).count() as f64 / v.len() as f64;
        assert!((low - 0.8).abs() < 0.01, "{low}");
    }

    #[test]
    fn bad_parameters_are_errors() {
        let mut rng = Prng::seed(1);
        assert_eq!(gaussian(&mut rng, 5, 1, 12), Err(EvalError::EmptyRange));
        assert_eq!(gaussian(&mut rng, -1, 1, 12), Err(EvalError::SysbenchRange));
        assert_eq!(
            gaussian(&mut rng, 1, 5, 0),
            Err(EvalError::SysbenchIterations(0))
        );
        assert_eq!(
            special(&mut rng, 1, 5, 1, 100, 12),
            Err(EvalError::SysbenchSpecial)
        );
        assert_eq!(
            pareto(&mut rng, 1, 5, 1.0),
            Err(EvalError::SysbenchPareto(1.0))
        );
    }

    #[test]
    fn strings_follow_the_template() {
        let mut rng = Prng::seed(7);
        let mut s = String::new();
        rand_str(&mut rng, "###-@@", &mut s);
        let b = s.as_bytes();
        assert_eq!(s.len(), 6);
        assert!(b[..3].iter().all(u8::is_ascii_digit) && b[3] == b'-');
        assert!(b[4..].iter().all(u8::is_ascii_lowercase));
        s.clear();
        rand_str(&mut rng, "é#ü@", &mut s);
        let chars: Vec<char> = s.chars().collect();
        assert_eq!((chars.len(), chars[0], chars[2]), (4, 'é', 'ü'));
        assert!(chars[1].is_ascii_digit() && chars[3].is_ascii_lowercase());
    }

    #[test]
    fn strings_draw_one_number_per_placeholder_in_order() {
        let (mut a, mut b) = (Prng::seed(11), Prng::seed(11));
        let mut s = String::from("x");
        rand_str(&mut a, "#@-#", &mut s);
        let expect: String = [
            "x".to_string(),
            b.uniform_range(0, 9).to_string(),
            char::from(b'a' + b.uniform_range(0, 25) as u8).to_string(),
            "-".to_string(),
            b.uniform_range(0, 9).to_string(),
        ]
        .concat();
        assert_eq!(s, expect);
        assert_eq!(a.uniform_range(0, 1 << 40), b.uniform_range(0, 1 << 40));
    }
}
