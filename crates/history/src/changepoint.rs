//! Change points in a series of runs: where its mean moved, by binary segmentation.
//! A segment's candidate split is where the runs before and after it differ most
//! (the largest pooled two-sample t: the likelihood-ratio location of one shift in
//! the mean, any split with 2 runs a side). When that split leaves fewer than
//! [`Options::min_segment`] runs on a side it is not decided yet (a newest step
//! needs that many runs after it) and the rest of the segment is searched without
//! them: forcing the split inward instead named a run before the step as the first
//! after it. Otherwise Welch's t-test between the two sides decides: the split is
//! kept when its p-value, times the number of candidates tried (Bonferroni: the best
//! of many splits of pure noise would otherwise look significant), is below
//! [`Options::alpha`], and both halves are searched again. (Not the split of smallest Welch p-value: far in the tails that
//! favours a split with more degrees of freedom over the right one, which moved the
//! change point one run late on a clear step.) Each change point is then measured between its neighbours (the
//! runs from the change point before it to the one after it). Pure numbers: no store.

/// The search's settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Options {
    /// The fewest runs on either side of a change point.
    pub min_segment: usize,
    /// The significance level, over all the splits a segment offers.
    pub alpha: f64,
}

impl Default for Options {
    /// At least 5 runs a side (fewer cannot tell a step from an outlier), 1%.
    fn default() -> Options {
        Options {
            min_segment: 5,
            alpha: 0.01,
        }
    }
}

/// Where a series' mean moved.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangePoint {
    /// The index of the first value after the change.
    pub index: usize,
    pub mean_before: f64,
    pub mean_after: f64,
    /// `(after - before) / |before|` (`None` when before is 0).
    pub relative_change: Option<f64>,
    /// Welch's two-sided p-value between the segments around it.
    pub p_value: f64,
}

/// Welch's t-test of two samples: two-sided p-value (1 when either has fewer than 2
/// values).
pub fn welch_p(a: &[f64], b: &[f64]) -> f64 {
    let stats = |x: &[f64]| {
        let n = x.len() as f64;
        let mean = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (n, mean, var)
    };
    if a.len() < 2 || b.len() < 2 {
        return 1.0;
    }
    let (na, ma, va) = stats(a);
    let (nb, mb, vb) = stats(b);
    welch_from(na, ma, va, nb, mb, vb)
}

/// Welch's p-value from each side's count, mean and variance.
fn welch_from(na: f64, ma: f64, va: f64, nb: f64, mb: f64, vb: f64) -> f64 {
    let (sa, sb) = (va.max(0.0) / na, vb.max(0.0) / nb);
    let se2 = sa + sb;
    if se2 <= 0.0 || !se2.is_finite() {
        // No spread on either side: any difference at all is certain.
        return if ma == mb { 1.0 } else { 0.0 };
    }
    let t = (ma - mb) / se2.sqrt();
    let df = se2 * se2 / (sa * sa / (na - 1.0) + sb * sb / (nb - 1.0));
    student_two_sided(t, df)
}

/// P(|T| >= |t|) for Student's t with `df` degrees of freedom:
/// `I_{df/(df+t²)}(df/2, 1/2)`.
pub fn student_two_sided(t: f64, df: f64) -> f64 {
    if !t.is_finite() {
        return 0.0;
    }
    incomplete_beta(df / 2.0, 0.5, df / (df + t * t)).clamp(0.0, 1.0)
}

/// ln Γ(x), Lanczos (g = 7, 9 terms): about 15 significant digits for x > 0.
fn ln_gamma(x: f64) -> f64 {
    const G: [f64; 9] = [
        0.999_999_999_999_809_9,
        676.520_368_121_885_1,
        -1_259.139_216_722_402_8,
        771.323_428_777_653_1,
        -176.615_029_162_140_6,
        12.507_343_278_686_905,
        -0.138_571_095_265_720_12,
        9.984_369_578_019_572e-6,
        1.505_632_735_149_311_6e-7,
    ];
    if x < 0.5 {
        let pi = std::f64::consts::PI;
        return (pi / (pi * x).sin()).ln() - ln_gamma(1.0 - x);
    }
    let x = x - 1.0;
    let mut a = G[0];
    let t = x + 7.5;
    for (i, g) in G.iter().enumerate().skip(1) {
        a += g / (x + i as f64);
    }
    0.5 * (2.0 * std::f64::consts::PI).ln() + (x + 0.5) * t.ln() - t + a.ln()
}

/// The regularised incomplete beta function `I_x(a, b)`, by its continued fraction
/// (Lentz's method), on the side where it converges fast.
pub fn incomplete_beta(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front =
        (ln_gamma(a + b) - ln_gamma(a) - ln_gamma(b) + a * x.ln() + b * (1.0 - x).ln()).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let mut c = 1.0;
    let mut d = 1.0 - (a + b) * x / (a + 1.0);
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    for m in 1..=300 {
        let m = m as f64;
        let step = |num: f64, c: &mut f64, d: &mut f64| {
            *d = 1.0 + num * *d;
            if d.abs() < TINY {
                *d = TINY;
            }
            *c = 1.0 + num / *c;
            if c.abs() < TINY {
                *c = TINY;
            }
            *d = 1.0 / *d;
            *c * *d
        };
        let even = m * (b - m) * x / ((a + 2.0 * m - 1.0) * (a + 2.0 * m));
        h *= step(even, &mut c, &mut d);
        let odd = -(a + m) * (a + b + m) * x / ((a + 2.0 * m) * (a + 2.0 * m + 1.0));
        let delta = step(odd, &mut c, &mut d);
        h *= delta;
        if (delta - 1.0).abs() < 1e-15 {
            break;
        }
    }
    h
}

/// Running sums of a series (centred on its mean, so the squares keep their
/// precision), for each segment's mean and variance in O(1).
struct Sums {
    s: Vec<f64>,
    q: Vec<f64>,
}

impl Sums {
    fn new(x: &[f64]) -> Sums {
        let centre = x.iter().sum::<f64>() / x.len().max(1) as f64;
        let (mut s, mut q) = (vec![0.0], vec![0.0]);
        for v in x {
            let d = v - centre;
            s.push(s.last().unwrap_or(&0.0) + d);
            q.push(q.last().unwrap_or(&0.0) + d * d);
        }
        Sums { s, q }
    }

    /// Count, mean (centred) and sample variance of `lo..hi`.
    fn stats(&self, lo: usize, hi: usize) -> (f64, f64, f64) {
        let n = (hi - lo) as f64;
        let sum = self.s[hi] - self.s[lo];
        let sq = self.q[hi] - self.q[lo];
        let mean = sum / n;
        (n, mean, ((sq - sum * mean) / (n - 1.0)).max(0.0))
    }

    /// The pooled two-sample t of `lo..k` against `k..hi` (0 without spread).
    fn pooled_t(&self, lo: usize, k: usize, hi: usize) -> f64 {
        let (na, ma, va) = self.stats(lo, k);
        let (nb, mb, vb) = self.stats(k, hi);
        let pooled = ((na - 1.0) * va + (nb - 1.0) * vb) / (na + nb - 2.0);
        let se = (pooled * (1.0 / na + 1.0 / nb)).sqrt();
        match se > 0.0 {
            true => (ma - mb).abs() / se,
            false if ma != mb => f64::INFINITY,
            false => 0.0,
        }
    }

    fn p(&self, lo: usize, k: usize, hi: usize) -> f64 {
        let (na, ma, va) = self.stats(lo, k);
        let (nb, mb, vb) = self.stats(k, hi);
        welch_from(na, ma, va, nb, mb, vb)
    }
}

/// The change points of `x`, in order.
pub fn detect(x: &[f64], opts: Options) -> Vec<ChangePoint> {
    let min = opts.min_segment.max(2);
    let sums = Sums::new(x);
    let mut found = Vec::new();
    let mut todo = vec![(0, x.len())];
    while let Some((lo, hi)) = todo.pop() {
        if hi - lo < 4 {
            continue;
        }
        let candidates = (lo + 2..=hi - 2).map(|k| (k, sums.pooled_t(lo, k, hi)));
        let Some((k, t)) = candidates.max_by(|a, b| a.1.total_cmp(&b.1)) else {
            continue;
        };
        if t == 0.0 {
            continue;
        }
        if hi - k < min {
            todo.push((lo, k));
            continue;
        }
        if k - lo < min {
            todo.push((k, hi));
            continue;
        }
        let tried = (hi - lo - 3) as f64;
        if sums.p(lo, k, hi) * tried < opts.alpha {
            found.push(k);
            todo.push((lo, k));
            todo.push((k, hi));
        }
    }
    found.sort_unstable();
    // Each measured between its neighbours.
    let bounds: Vec<usize> = std::iter::once(0)
        .chain(found.iter().copied())
        .chain(std::iter::once(x.len()))
        .collect();
    bounds
        .windows(3)
        .map(|w| {
            let (before, after) = (&x[w[0]..w[1]], &x[w[1]..w[2]]);
            let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
            let (mb, ma) = (mean(before), mean(after));
            ChangePoint {
                index: w[1],
                mean_before: mb,
                mean_after: ma,
                relative_change: (mb != 0.0).then(|| (ma - mb) / mb.abs()),
                p_value: welch_p(before, after),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic normal-ish noise (sum of 12 uniforms from a 64-bit LCG).
    fn noise(seed: u64, n: usize) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                (0..12)
                    .map(|_| {
                        s = s
                            .wrapping_mul(6_364_136_223_846_793_005)
                            .wrapping_add(1_442_695_040_888_963_407);
                        (s >> 11) as f64 / (1u64 << 53) as f64
                    })
                    .sum::<f64>()
                    - 6.0
            })
            .collect()
    }

    #[test]
    fn student_t_tail_matches_tables() {
        // t(0.975) quantiles: df 1 -> 12.706, df 10 -> 2.228, df 30 -> 2.042.
        for (t, df) in [(12.706, 1.0), (2.228, 10.0), (2.042, 30.0)] {
            let p = student_two_sided(t, df);
            assert!((p - 0.05).abs() < 5e-4, "t={t} df={df}: {p}");
        }
        assert!((student_two_sided(0.0, 5.0) - 1.0).abs() < 1e-12);
        assert!(student_two_sided(40.0, 8.0) < 1e-9);
    }

    #[test]
    fn a_clear_step_is_found_at_its_first_run() {
        let x: Vec<f64> = noise(1, 60)
            .iter()
            .enumerate()
            .map(|(i, e)| if i < 37 { 1000.0 } else { 800.0 } + 20.0 * e)
            .collect();
        let cps = detect(&x, Options::default());
        assert_eq!(cps.len(), 1, "{cps:?}");
        assert_eq!(cps[0].index, 37);
        let r = cps[0].relative_change.unwrap();
        assert!((r + 0.2).abs() < 0.02, "{r}");
        assert!(cps[0].p_value < 1e-10);
    }

    /// Splitting at the smallest Welch p-value put this step's change point one run
    /// late: with the first run after the step on the left, the left side's larger
    /// variance gave more degrees of freedom and, far in the tail, a smaller p.
    #[test]
    fn a_step_between_unequal_sides_is_found_at_its_first_run() {
        let x: Vec<f64> = noise(4, 40)
            .iter()
            .enumerate()
            .map(|(i, e)| if i < 28 { 1000.0 } else { 820.0 } + 15.0 * e)
            .collect();
        let at: Vec<usize> = detect(&x, Options::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(at, [28]);
    }

    /// With the minimum segment forcing the split inward, a newest step with one run
    /// too few after it was put a run early, naming a run before the step.
    #[test]
    fn a_newest_step_is_not_named_until_it_has_the_minimum_segment() {
        let series = |n: usize| -> Vec<f64> {
            noise(5, n)
                .iter()
                .enumerate()
                .map(|(i, e)| if i < 6 { 400.0 } else { 320.0 } + 10.0 * e)
                .collect()
        };
        assert!(detect(&series(10), Options::default()).is_empty());
        let at: Vec<usize> = detect(&series(11), Options::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(at, [6]);
    }

    #[test]
    fn two_steps_are_both_found() {
        let x: Vec<f64> = noise(2, 90)
            .iter()
            .enumerate()
            .map(|(i, e)| match i {
                0..30 => 100.0,
                30..60 => 130.0,
                _ => 90.0,
            } + 3.0 * e)
            .collect();
        let at: Vec<usize> = detect(&x, Options::default())
            .iter()
            .map(|c| c.index)
            .collect();
        assert_eq!(at, [30, 60]);
    }

    #[test]
    fn noise_has_no_change_point() {
        for seed in 0..20 {
            let x: Vec<f64> = noise(seed, 200).iter().map(|e| 500.0 + 10.0 * e).collect();
            assert!(detect(&x, Options::default()).is_empty(), "seed {seed}");
        }
        // Too short to have one, and a constant series.
        assert!(detect(&[1.0, 2.0, 1.0], Options::default()).is_empty());
        assert!(detect(&[5.0; 40], Options::default()).is_empty());
    }

    #[test]
    fn a_step_shorter_than_the_minimum_segment_is_not_a_change_point() {
        let mut x: Vec<f64> = noise(3, 40).iter().map(|e| 100.0 + e).collect();
        for v in &mut x[37..] {
            *v -= 30.0;
        }
        assert!(detect(&x, Options::default()).is_empty());
        let cps = detect(
            &x,
            Options {
                min_segment: 3,
                alpha: 0.01,
            },
        );
        assert_eq!(cps.iter().map(|c| c.index).collect::<Vec<_>>(), [37]);
    }
}
