//! The steps of a sweep or a search as a curve over the swept value: one point per
//! value (a search's closed-loop step left out), each figure's (every one a sweep
//! shows, [`super::sweep_figures`]) mean over the value's
//! repeats with a 95 % interval where it repeats (Student's t over the repeats), the
//! peak and the knee. Pure.
//!
//! **The knee** is the last value before the curve's scaling efficiency first falls
//! below [`KNEE_EFFICIENCY`]: each value's throughput per unit of the swept value
//! (`tps_i / x_i`) against the first value's (`tps_1 / x_1`). Up to the knee, doubling
//! the clients (or the rate) still buys at least 80 % of a doubling in throughput;
//! past it, less. For a script variable, whose 0 means nothing, the throughput added
//! per unit since the first value (`(tps_i - tps_1) / (x_i - x_1)`) is held against
//! the first step up's. When no value falls below, the knee is the last value and the
//! curve is still scaling there: the knee is at or beyond it. Being a ratio to the
//! first value, not to the neighbour, it is not moved by the few percent of noise
//! between closely spaced values.

use super::{Capacity, Kind, Step, CLOSED_LOOP};
use crate::compare::interval::t975;
use crate::compare::FigureSpec;

/// The scaling efficiency (see the module's header) below which the curve is past
/// its knee.
pub const KNEE_EFFICIENCY: f64 = 0.8;

/// A figure at one value: its mean over the value's steps, with a 95 % interval when
/// there are two or more.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    pub mean: f64,
    pub n: usize,
    pub low: Option<f64>,
    pub high: Option<f64>,
}

impl Stat {
    /// The mean and interval of `values` (none for no values).
    pub fn of(values: &[f64]) -> Option<Stat> {
        let n = values.len();
        if n == 0 {
            return None;
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        let (low, high) = if n >= 2 {
            let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
            let half = t975((n - 1) as f64) * (var / n as f64).sqrt();
            (Some(mean - half), Some(mean + half))
        } else {
            (None, None)
        };
        Some(Stat { mean, n, low, high })
    }
}

/// One value of the curve.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// The value as given.
    pub label: String,
    /// Where it is on the x axis: the value, or its place (1, 2, ...) when some value
    /// is not a number.
    pub x: f64,
    /// The steps run at it.
    pub steps: Vec<u32>,
    /// Throughput: what the peak and the knee are read from.
    pub tps: Option<Stat>,
    /// Every figure a sweep shows ([`super::sweep_figures`]), in its order.
    pub figures: Vec<(&'static FigureSpec, Option<Stat>)>,
}

impl Point {
    /// The figure named `name` at this value.
    pub fn stat(&self, name: &str) -> Option<Stat> {
        self.figures
            .iter()
            .find(|(f, _)| f.name == name)
            .and_then(|(_, s)| *s)
    }
}

/// The knee, and whether the curve still scaled at it (it is then the last value).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knee {
    pub index: usize,
    pub still_scaling: bool,
}

/// The curve of a file's steps.
#[derive(Debug, Clone, PartialEq)]
pub struct Curve {
    /// Each value's figures from all its steps (what the table and charts draw).
    pub points: Vec<Point>,
    /// The same points with their figures from the whole steps only
    /// ([`Step::is_whole`]; none where a value has none): what the peak and the knee
    /// are read from.
    pub whole: Vec<Point>,
    /// Every value is a number (the x axis is the values').
    pub numeric: bool,
    /// The point of the highest mean tps of whole steps.
    pub peak: Option<usize>,
    pub knee: Option<Knee>,
}

/// The curve of `steps` (a search's closed-loop step left out), by value, in
/// ascending order of the values when all are numbers, else in the order first run.
pub fn curve(capacity: &Capacity, steps: &[Step]) -> Curve {
    let mut values: Vec<&str> = Vec::new();
    for s in steps.iter().filter(|s| s.value != CLOSED_LOOP) {
        if !values.contains(&s.value.as_str()) {
            values.push(&s.value);
        }
    }
    let numeric = values.iter().all(|v| v.trim().parse::<f64>().is_ok());
    let all: Vec<&Step> = steps.iter().collect();
    let mut points: Vec<Point> = values
        .iter()
        .enumerate()
        .map(|(i, v)| point(v, i, numeric, &all))
        .collect();
    // The peak and the knee are read from the whole steps only (a step interrupted
    // or whose clients aborted measured less than its value): the same points, with
    // their figures from those steps.
    let whole: Vec<&Step> = steps.iter().filter(|s| s.is_whole()).collect();
    let mut of_whole: Vec<Point> = values
        .iter()
        .enumerate()
        .map(|(i, v)| point(v, i, numeric, &whole))
        .collect();
    if numeric {
        points.sort_by(|a, b| a.x.total_cmp(&b.x));
        of_whole.sort_by(|a, b| a.x.total_cmp(&b.x));
    }
    let tps = |p: &Point| p.tps.map(|t| t.mean);
    let peak = (0..of_whole.len())
        .filter_map(|i| Some((i, tps(&of_whole[i])?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i);
    // Clients and rates start from 0 at 0; a variable's 0 means nothing.
    let from_origin = numeric
        && (capacity.kind == Kind::Search
            || ["clients", "rate"].contains(&capacity.parameter.as_str()));
    // The values with a whole step, by their place among all the points.
    let measured: Vec<usize> = (0..of_whole.len())
        .filter(|&i| tps(&of_whole[i]).is_some())
        .collect();
    let xs: Vec<f64> = measured.iter().map(|&i| of_whole[i].x).collect();
    let ys: Vec<f64> = measured.iter().filter_map(|&i| tps(&of_whole[i])).collect();
    // A value that measured nothing at all leaves the curve without a knee.
    let knee = match points.iter().all(|p| tps(p).is_some()) {
        true => knee(&xs, &ys, from_origin).map(|k| Knee {
            index: measured[k.index],
            ..k
        }),
        false => None,
    };
    Curve {
        points,
        whole: of_whole,
        numeric,
        peak,
        knee,
    }
}

fn point(value: &str, place: usize, numeric: bool, steps: &[&Step]) -> Point {
    let at: Vec<&Step> = steps.iter().copied().filter(|s| s.value == value).collect();
    let figures: Vec<super::Figures> = at.iter().map(|s| s.figures()).collect();
    let stat = |name: &str| {
        let v: Vec<f64> = figures.iter().filter_map(|f| f.get(name)).collect();
        Stat::of(&v)
    };
    Point {
        label: value.to_string(),
        x: if numeric {
            value.trim().parse().unwrap_or(0.0)
        } else {
            (place + 1) as f64
        },
        steps: at.iter().map(|s| s.step).collect(),
        tps: stat("tps"),
        figures: super::sweep_figures()
            .map(|(f, _)| (f, stat(f.name)))
            .collect(),
    }
}

/// The knee of `ys` over ascending `xs` (see the module's header); `from_origin`:
/// efficiency is throughput per unit (clients, rates), else the throughput added per
/// unit since the first value. `None` with fewer than two points or no throughput
/// to start from.
pub fn knee(xs: &[f64], ys: &[f64], from_origin: bool) -> Option<Knee> {
    if xs.len() < 2 || xs.len() != ys.len() {
        return None;
    }
    let per_unit = |i: usize| match from_origin {
        true => ys[i] / xs[i],
        false => (ys[i] - ys[0]) / (xs[i] - xs[0]),
    };
    let first = if from_origin { 0 } else { 1 };
    let base = per_unit(first);
    if !(base.is_finite() && base > 0.0) {
        return None;
    }
    for i in first + 1..xs.len() {
        let e = per_unit(i) / base;
        if !(e.is_finite() && e >= KNEE_EFFICIENCY) {
            return Some(Knee {
                index: i - 1,
                still_scaling: false,
            });
        }
    }
    Some(Knee {
        index: xs.len() - 1,
        still_scaling: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knee_is_the_last_value_scaling_at_80_percent_efficiency() {
        // Linear to 2 clients, then flat: 4 clients do 60% of 4 times the first's.
        let xs = [1.0, 2.0, 4.0, 8.0, 16.0];
        let ys = [5000.0, 9000.0, 12000.0, 13000.0, 13000.0];
        assert_eq!(
            knee(&xs, &ys, true),
            Some(Knee {
                index: 1,
                still_scaling: false
            })
        );
        // About linear throughout: the knee is the last value, still scaling.
        let ys = [236.0, 448.0, 922.0, 1817.0, 3900.0];
        assert_eq!(
            knee(&xs, &ys, true),
            Some(Knee {
                index: 4,
                still_scaling: true
            })
        );
        // Rates 2% apart with a few percent of noise: the knee where tps falls behind.
        let rates = [600.0, 612.0, 624.2, 636.7, 649.5, 662.4];
        let tps = [605.7, 598.7, 638.8, 646.4, 500.0, 520.0];
        assert_eq!(knee(&rates, &tps, true).unwrap().index, 3);
        // Throughput falling at once: the knee is the first value.
        assert_eq!(knee(&xs[..2], &[100.0, 90.0], true).unwrap().index, 0);
        // A variable: what each value adds since the first, against the first step up.
        let ys = [100.0, 200.0, 400.0, 420.0, 430.0];
        assert_eq!(knee(&xs, &ys, false).unwrap().index, 2);
        assert_eq!(knee(&[1.0], &[1.0], true), None);
        assert_eq!(knee(&xs[..2], &[0.0, 0.0], true), None);
    }

    #[test]
    fn repeats_give_a_mean_and_an_interval_by_students_t() {
        assert_eq!(Stat::of(&[]), None);
        let one = Stat::of(&[5.0]).unwrap();
        assert_eq!((one.mean, one.low, one.high), (5.0, None, None));
        let s = Stat::of(&[9.0, 10.0, 11.0]).unwrap();
        assert_eq!(s.mean, 10.0);
        // sd 1, n 3: t(2) 4.303 * 1 / sqrt(3).
        let half = 4.303 / 3f64.sqrt();
        assert!((s.high.unwrap() - 10.0 - half).abs() < 1e-9);
        assert!((10.0 - s.low.unwrap() - half).abs() < 1e-9);
    }
}
