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
    Ok(Special::new(lb, ub, pct, res, iter)?.draw(rng))
}

/// [`special`]'s parameters checked, and the arithmetic that depends on them alone
/// done: what a `sb_special()` of constants draws from, the same doubles computed
/// the same way, once.
#[derive(Debug, Clone, Copy)]
pub struct Special {
    a: u32,
    t: f64,
    iter: u32,
    range_size: f64,
    /// `1.0 / iter`
    per_iter: f64,
    /// `d + 1.0`, with `d` the width of the middle band
    band: f64,
    /// `t / 2.0`
    half: f64,
    /// `t * (pct / 200.0)`
    half_band: f64,
}

impl Special {
    /// The parameters of `sb_special(lb, ub, pct, res, iter)`, or sysbench's
    /// complaint about them.
    pub fn new(lb: i64, ub: i64, pct: i64, res: i64, iter: i64) -> Result<Special, EvalError> {
        let (a, b) = bounds(lb, ub)?;
        let iter = check_iter(iter)?;
        if !(0..100).contains(&res) || !(0..=100).contains(&pct) {
            return Err(EvalError::SysbenchSpecial);
        }
        let t = f64::from(b - a);
        let d = t * (pct as f64 / 100.0);
        Ok(Special {
            a,
            t,
            iter,
            range_size: t * (100.0 / (100.0 - res as f64)),
            per_iter: 1.0 / f64::from(iter),
            band: d + 1.0,
            half: t / 2.0,
            half_band: t * (pct as f64 / 200.0),
        })
    }

    /// One value: a draw picks the middle band or the gaussian, which draws `iter`
    /// more.
    #[inline]
    pub fn draw(&self, rng: &mut Prng) -> i64 {
        let (a, t) = (self.a, self.t);
        let rnd = rng.double();
        if rnd * self.range_size < t {
            let sum: f64 = (0..self.iter).map(|_| rng.double()).sum();
            return to_u32(f64::from(a) + sum * t * self.per_iter);
        }
        let res = rnd * self.band + self.half - self.half_band;
        i64::from(a) + i64::from(res as u32)
    }
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
/// stays; appended to `out` (a workload's `c` and `pad` are 180 bytes a row).
///
/// sysbench draws once per placeholder; its generator is not ours, so its values
/// cannot be reproduced anyway, only their shape. One 64-bit draw gives 12 digits or
/// 8 letters (`Places`): an `oltp_read_write` transaction's update and insert have 275
/// digits, which drawn one at a time cost a tenth of the client's instructions. A run
/// of `#` takes its places two a multiply (`Places::digits`), the same digits as one
/// place at a time; the template is copied to `out` and rewritten there.
#[allow(unsafe_code)]
pub fn rand_str(rng: &mut Prng, template: &str, out: &mut String) {
    let at = out.len();
    out.push_str(template);
    // SAFETY: only the bytes `#` and `@` are rewritten below, each to an ASCII digit
    // or letter. ASCII bytes are never part of a longer UTF-8 sequence, so the text
    // stays valid UTF-8.
    let bytes = &mut unsafe { out.as_mut_vec() }[at..];
    let (mut digits, mut letters) = (Places::new(10, 12), Places::new(26, 8));
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'#' => {
                let run = run_of_hashes(&bytes[i..]);
                digits.digits(rng, &mut bytes[i..i + run]);
                i += run;
            }
            b'@' => {
                bytes[i] = b'a' + letters.next(rng);
                i += 1;
            }
            _ => i += 1,
        }
    }
}

/// How many `#` `bytes` starts with: eight at a time, then one at a time (sysbench's
/// templates have runs of 11).
fn run_of_hashes(bytes: &[u8]) -> usize {
    const EIGHT: u64 = u64::from_ne_bytes([b'#'; 8]);
    let mut run = 0;
    while let Some(chunk) = bytes.get(run..run + 8) {
        if chunk != EIGHT.to_ne_bytes() {
            break;
        }
        run += 8;
    }
    run + bytes[run..].iter().take_while(|&&b| b == b'#').count()
}

/// Uniform places in `[0, radix)` taken from one 64-bit draw, most significant first:
/// the draw read as a fraction of 2^64 and written in base `radix`. The first `per_draw`
/// places are uniform to within `radix^per_draw / 2^64` (10^12: 5e-8), then a new draw.
struct Places {
    radix: u64,
    per_draw: u32,
    fraction: u64,
    left: u32,
}

impl Places {
    fn new(radix: u64, per_draw: u32) -> Places {
        Places {
            radix,
            per_draw,
            fraction: 0,
            left: 0,
        }
    }

    /// Fills `dst` with the next `dst.len()` decimal places, two a multiply: the
    /// top of the fraction times 100 is ten times the next place plus the one after,
    /// and its low 64 bits the fraction that two steps of [`Places::next`] leave.
    /// Pairs never straddle two draws.
    fn digits(&mut self, rng: &mut Prng, dst: &mut [u8]) {
        debug_assert_eq!(self.radix, 10);
        let mut at = 0;
        while at < dst.len() {
            if self.left == 0 {
                self.fraction = rng.next_u64();
                self.left = self.per_draw;
            }
            // the places this draw has left for `dst`
            let n = (dst.len() - at).min(self.left as usize);
            let (now, _) = dst[at..].split_at_mut(n);
            let mut fraction = self.fraction;
            let mut pairs = now.chunks_exact_mut(2);
            for pair in &mut pairs {
                let scaled = u128::from(fraction) * 100;
                fraction = scaled as u64;
                let p = (scaled >> 64) as usize * 2;
                pair.copy_from_slice(&crate::value::DIGIT_PAIRS[p..p + 2]);
            }
            if let [last] = pairs.into_remainder() {
                let scaled = u128::from(fraction) * 10;
                fraction = scaled as u64;
                *last = b'0' + (scaled >> 64) as u8;
            }
            self.fraction = fraction;
            self.left -= n as u32;
            at += n;
        }
    }

    #[inline]
    fn next(&mut self, rng: &mut Prng) -> u8 {
        if self.left == 0 {
            self.fraction = rng.next_u64();
            self.left = self.per_draw;
        }
        self.left -= 1;
        let scaled = u128::from(self.fraction) * u128::from(self.radix);
        self.fraction = scaled as u64;
        (scaled >> 64) as u8
    }
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
    fn strings_keep_the_template_and_take_12_digits_or_8_letters_a_draw() {
        let (mut a, mut b) = (Prng::seed(11), Prng::seed(11));
        let mut s = String::from("x");
        rand_str(&mut a, "#@-#", &mut s);
        // The first digits and letter of one draw each: its top places in base 10, 26.
        let (d, l) = (b.next_u64(), b.next_u64());
        let place = |x: u64, radix: u128| ((u128::from(x) * radix) >> 64) as u8;
        let second = place((u128::from(d) * 10) as u64, 10);
        let expect = format!(
            "x{}{}-{}",
            place(d, 10),
            char::from(b'a' + place(l, 26)),
            second
        );
        assert_eq!(s, expect);
        // 12 digits a draw: 13 took two draws, so the streams meet again after it.
        let (mut a, mut b) = (Prng::seed(5), Prng::seed(5));
        let mut s = String::new();
        rand_str(&mut a, &"#".repeat(13), &mut s);
        b.next_u64();
        b.next_u64();
        assert_eq!(a.next_u64(), b.next_u64());
        assert!(s.bytes().all(|c| c.is_ascii_digit()), "{s}");
    }

    #[test]
    fn every_digit_and_letter_is_about_equally_likely() {
        let mut rng = Prng::seed(3);
        let mut s = String::new();
        for _ in 0..2_000 {
            rand_str(&mut rng, &"#".repeat(110), &mut s);
            rand_str(&mut rng, &"@".repeat(130), &mut s);
        }
        let count = |c: u8| s.bytes().filter(|&b| b == c).count() as f64;
        let near = |chars: std::ops::RangeInclusive<u8>, each: f64, bound: f64| {
            for c in chars {
                let n = count(c);
                assert!((n - each).abs() < bound, "{} {n}", c as char);
            }
        };
        // 220,000 digits: 22,000 each, a standard deviation of 141.
        near(b'0'..=b'9', 22_000.0, 800.0);
        // 260,000 letters: 10,000 each, a standard deviation of 98.
        near(b'a'..=b'z', 10_000.0, 600.0);
    }

    /// The one-place-at-a-time form, which [`rand_str`] must match draw for draw.
    fn rand_str_by_places(rng: &mut Prng, template: &str, out: &mut String) {
        let (mut digits, mut letters) = (Places::new(10, 12), Places::new(26, 8));
        for c in template.chars() {
            match c {
                '#' => out.push(char::from(b'0' + digits.next(rng))),
                '@' => out.push(char::from(b'a' + letters.next(rng))),
                c => out.push(c),
            }
        }
    }

    proptest::proptest! {
        /// Runs written two places a multiply give the same string, and leave
        /// the generator where one place at a time leaves it.
        #[test]
        fn strings_match_one_place_at_a_time(
            seed in proptest::num::u64::ANY,
            template in "[#@xé-]{0,80}|(#{0,40}-){0,5}|@{0,70}",
        ) {
            let (mut a, mut b) = (Prng::seed(seed), Prng::seed(seed));
            let (mut s, mut t) = (String::from("ab"), String::from("ab"));
            rand_str(&mut a, &template, &mut s);
            rand_str_by_places(&mut b, &template, &mut t);
            proptest::prop_assert_eq!(s, t);
            proptest::prop_assert_eq!(a.next_u64(), b.next_u64());
        }
    }
}
