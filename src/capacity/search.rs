//! `--find-max-rate`'s next step, as a pure function of what the steps so far found.
//!
//! The first step runs without `-R` (closed loop): its tps, T, is the most the clients
//! do at this `-c`. Then a ladder of `-R` steps: T itself; when it meets the target,
//! up by [`CLIMB`] a rung until one misses (a target loose enough that a short step
//! absorbs the backlog of a rate above T); when it misses, down through [`RUNGS`] of T
//! until one meets. Then a bisection at the geometric mean of the highest rate that
//! met and the lowest that missed above it, until the two are within the tolerance
//! (`hi <= lo * (1 + tolerance)`) or the steps run out. A rate that met above one that
//! missed (noise) is not taken: the rate found is below every miss.
//!
//! Near the limit one short step's p99 is noisy: a queue that happened not to build
//! up meets a target that the same rate misses the next time. So the rate about to be
//! found is run once more (a confirmation step); it is found only if it meets again,
//! and a rate that met once and missed once counts as missed, the search going on
//! below it.

use pgbench_results::capacity::Role;

/// The ladder down, as fractions of the closed-loop tps: close together at the top,
/// where most targets are met (a bracket there takes two or three bisections to
/// narrow to 5%), then wider, so that a target met at 15% of the closed loop is still
/// narrowed within the 12 steps of the default.
pub const RUNGS: [f64; 8] = [1.0, 0.9, 0.7, 0.5, 0.3, 0.15, 0.05, 0.01];
/// The ladder up, a rung's factor over the last that met.
pub const CLIMB: f64 = 1.1;
/// How far above the closed-loop tps the ladder climbs before it gives up finding a
/// miss.
pub const CLIMB_LIMIT: f64 = 2.0;

/// A rate tried and whether its step met the target.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tried {
    pub rate: f64,
    pub met: bool,
}

/// What the search does next.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Next {
    Run { rate: f64, role: Role },
    Done(Outcome),
}

/// How the search ended.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outcome {
    /// The highest rate that met the target below every miss.
    pub found: Option<f64>,
    /// The lowest rate that missed.
    pub first_miss: Option<f64>,
    /// The two are within the tolerance of each other.
    pub within_tolerance: bool,
    /// The rate found met in two steps.
    pub confirmed: bool,
}

/// What the rates tried found, with no step more.
pub fn outcome(tried: &[Tried], tolerance: f64) -> Outcome {
    let first_miss = tried
        .iter()
        .filter(|t| !t.met)
        .map(|t| t.rate)
        .min_by(f64::total_cmp);
    let found = tried
        .iter()
        .filter(|t| t.met && first_miss.is_none_or(|m| t.rate < m))
        .map(|t| t.rate)
        .max_by(f64::total_cmp);
    let within_tolerance =
        matches!((found, first_miss), (Some(lo), Some(hi)) if hi <= lo * (1.0 + tolerance));
    let confirmed =
        found.is_some_and(|f| tried.iter().filter(|t| t.met && t.rate == f).count() >= 2);
    Outcome {
        found,
        first_miss,
        within_tolerance,
        confirmed,
    }
}

/// The next step, given the closed-loop tps, the rates tried in order, the tolerance
/// (a fraction) and the most steps (the closed-loop one included).
pub fn next(closed_loop_tps: f64, tried: &[Tried], tolerance: f64, max_steps: u32) -> Next {
    let so_far = outcome(tried, tolerance);
    if !(closed_loop_tps.is_finite() && closed_loop_tps > 0.0)
        || tried.len() + 1 >= max_steps as usize
    {
        return Next::Done(so_far);
    }
    // Nothing more to narrow: the rate about to be found is confirmed, or the search
    // is done. `narrowed`: the bracket is as narrow as the rates can tell apart.
    let settle = |narrowed: bool| match so_far.found {
        Some(rate) if !so_far.confirmed => Next::Run {
            rate,
            role: Role::Confirmation,
        },
        _ => Next::Done(Outcome {
            within_tolerance: so_far.within_tolerance || narrowed,
            ..so_far
        }),
    };
    if so_far.within_tolerance {
        return settle(false);
    }
    let (rate, role) = match (so_far.found, so_far.first_miss) {
        (None, None) => (closed_loop_tps, Role::Ladder),
        (Some(lo), None) if lo * CLIMB > closed_loop_tps * CLIMB_LIMIT => return settle(false),
        (Some(lo), None) => (lo * CLIMB, Role::Ladder),
        (None, Some(hi)) => {
            let below = RUNGS
                .iter()
                .map(|f| f * closed_loop_tps)
                .find(|r| round(*r) < hi);
            match below {
                Some(r) => (r, Role::Ladder),
                None => return settle(false),
            }
        }
        (Some(lo), Some(hi)) => ((lo * hi).sqrt(), Role::Bisection),
    };
    let r = round(rate);
    // Rounded onto a rate tried: nothing left between them to tell apart.
    if tried.iter().any(|t| t.rate == r) || r <= 0.0 {
        return settle(so_far.found.is_some() && so_far.first_miss.is_some());
    }
    Next::Run { rate: r, role }
}

/// A rate to 4 significant digits (`926.5`, `12350`, `0.1234`): what `-R` is given
/// and the lines show.
pub fn round(rate: f64) -> f64 {
    if !(rate.is_finite() && rate > 0.0) {
        return 0.0;
    }
    let scale = 10f64.powi(3 - rate.log10().floor() as i32);
    (rate * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs the search against a server whose rates up to `max` meet the target.
    fn search(t: f64, max: f64, tolerance: f64, steps: u32) -> (Vec<(f64, Role)>, Outcome) {
        let mut tried = Vec::new();
        let mut roles = Vec::new();
        loop {
            match next(t, &tried, tolerance, steps) {
                Next::Run { rate, role } => {
                    roles.push((rate, role));
                    tried.push(Tried {
                        rate,
                        met: rate <= max,
                    });
                }
                Next::Done(o) => return (roles, o),
            }
        }
    }

    #[test]
    fn the_ladder_brackets_the_bisection_narrows_and_a_step_confirms() {
        let (steps, o) = search(1000.0, 930.0, 0.05, 12);
        assert_eq!(
            steps,
            [
                (1000.0, Role::Ladder),
                (900.0, Role::Ladder),
                (948.7, Role::Bisection),
                (924.0, Role::Bisection),
                (924.0, Role::Confirmation),
            ]
        );
        let expected = Outcome {
            found: Some(924.0),
            first_miss: Some(948.7),
            within_tolerance: true,
            confirmed: true,
        };
        assert_eq!(o, expected);
        // Within the 12 steps (the closed loop's first), whatever the answer's place
        // down to 15% of the closed loop, and above it.
        for max in [150.0, 260.0, 499.0, 760.0, 999.0, 1050.0, 1500.0] {
            let (steps, o) = search(1000.0, max, 0.05, 12);
            assert!(steps.len() < 12, "{max}: {steps:?}");
            let (lo, hi) = (o.found.unwrap(), o.first_miss.unwrap());
            assert!(
                o.within_tolerance && o.confirmed && lo <= max && max < hi && hi <= lo * 1.05,
                "{max}: {o:?}"
            );
        }
        // Further down, the steps run out first: said, with the best so far.
        let (steps, o) = search(1000.0, 80.0, 0.05, 12);
        assert_eq!(steps.len(), 11);
        assert!(
            !o.within_tolerance && o.found.is_some_and(|f| f <= 80.0),
            "{o:?}"
        );
    }

    #[test]
    fn a_rate_that_meets_then_misses_its_confirmation_counts_as_missed() {
        // 924 meets in the bisection by luck, then misses when run again.
        let mut tried = Vec::new();
        let mut seen_924 = false;
        let o = loop {
            match next(1000.0, &tried, 0.05, 12) {
                Next::Run { rate, .. } => {
                    let met = if rate == 924.0 {
                        !std::mem::replace(&mut seen_924, true)
                    } else {
                        rate <= 905.0
                    };
                    tried.push(Tried { rate, met });
                }
                Next::Done(o) => break o,
            }
        };
        assert_eq!(
            tried[4],
            Tried {
                rate: 924.0,
                met: false
            },
            "{tried:?}"
        );
        assert_eq!(o.first_miss, Some(924.0));
        let found = o.found.unwrap();
        assert!(o.confirmed && o.within_tolerance && (900.0..=905.0).contains(&found));
    }

    #[test]
    fn nothing_met_noise_and_the_step_budget_are_said() {
        // Even 1% of the closed loop misses.
        let (steps, o) = search(1000.0, 1.0, 0.05, 12);
        assert_eq!(steps.len(), RUNGS.len());
        let none = Outcome {
            found: None,
            first_miss: Some(10.0),
            within_tolerance: false,
            confirmed: false,
        };
        assert_eq!(o, none);
        // Out of steps: the best so far, not within the tolerance.
        let (steps, o) = search(1000.0, 930.0, 0.001, 5);
        assert_eq!(steps.len(), 4, "5 steps, the closed loop included");
        assert!(!o.within_tolerance && o.found.is_some());
        // A rate that met above one that missed is noise: the answer stays below.
        let tried = [
            (1000.0, false),
            (900.0, false),
            (750.0, true),
            (950.0, true),
        ]
        .map(|(rate, met)| Tried { rate, met });
        let bisection = Next::Run {
            rate: 821.6,
            role: Role::Bisection,
        };
        assert_eq!(next(1000.0, &tried, 0.05, 12), bisection);
        // No closed-loop throughput: nothing to search.
        assert!(matches!(
            next(0.0, &[], 0.05, 12),
            Next::Done(Outcome { found: None, .. })
        ));
        // Every rate meets: the climb stops at twice the closed loop, confirmed.
        let (_, o) = search(1000.0, f64::INFINITY, 0.05, 12);
        assert_eq!(
            (o.first_miss, o.within_tolerance, o.confirmed),
            (None, false, true)
        );
    }

    #[test]
    fn rates_keep_four_significant_digits() {
        assert_eq!(round(948.683), 948.7);
        assert_eq!(round(12_345.6), 12_350.0);
        assert_eq!(round(0.123_456), 0.1235);
        assert_eq!(round(-1.0), 0.0);
    }
}
