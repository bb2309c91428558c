//! What a sweep or search says on stderr as each step begins: which step of how
//! many, at what, about how long is left, and the best so far ([`best`]), so that a
//! person watching a long sweep sees where it is. Pure: the runner passes the figures
//! in.

use super::search::{self, Tried};
use pgbench_results::capacity::{table, Capacity, Step};
use pgbench_results::report::fmt_f;

/// The line before a step.
#[derive(Debug, Clone, PartialEq)]
pub struct StepStart {
    /// The step about to run, from 1.
    pub step: usize,
    /// A sweep's steps; a search's most.
    pub of: usize,
    /// A search: `of` is only its most.
    pub at_most: bool,
    /// `clients=2`, `-R 900.0 (ladder)`.
    pub what: String,
    /// Seconds left, this step's included, when they can be told.
    pub left_s: Option<f64>,
    /// `244.9 tps at clients=1`, `-R 900.0 met p99<=20ms`.
    pub best: Option<String>,
}

impl StepStart {
    pub fn line(&self) -> String {
        let of = match self.at_most {
            true => format!(" of at most {}", self.of),
            false => format!("/{}", self.of),
        };
        let mut line = format!("step {}{of}: {}", self.step, self.what);
        if let Some(s) = self.left_s {
            let about = if self.at_most { "at most" } else { "about" };
            // Rounded, a step of half a second was "about 0 s left" (#43).
            match s < 1.0 {
                true => line.push_str("; under 1 s left"),
                false => line.push_str(&format!("; {about} {} left", duration(s))),
            }
        }
        if let Some(best) = &self.best {
            line.push_str(&format!("; best so far: {best}"));
        }
        line
    }
}

/// `45 s`, `3 min 5 s`, `2 h 10 min`: rounded up, as time left is best not
/// promised short.
pub fn duration(s: f64) -> String {
    let s = s.max(0.0).ceil() as u64;
    match s {
        0..=59 => format!("{s} s"),
        60..=3599 => match s % 60 {
            0 => format!("{} min", s / 60),
            r => format!("{} min {r} s", s / 60),
        },
        _ => match s % 3600 / 60 {
            0 => format!("{} h", s / 3600),
            m => format!("{} h {m} min", s / 3600),
        },
    }
}

/// Seconds left for `remaining` steps (this one included): at the mean wall time of
/// the steps done, or before any is done at what a step is planned to take (its
/// warm-up and `-T`, and a second to connect), if that is known.
pub fn left(done_s: &[f64], planned_s: Option<f64>, remaining: usize) -> Option<f64> {
    let per_step = match done_s {
        [] => planned_s.map(|p| p + 1.0)?,
        done => done.iter().sum::<f64>() / done.len() as f64,
    };
    Some(per_step * remaining as f64)
}

/// The best so far: a sweep's highest tps; a search's (`tolerance` given) highest
/// rate met below every rate missed, as the search will say at its end.
pub fn best(capacity: &Capacity, steps: &[Step], tolerance: Option<f64>) -> Option<String> {
    let Some(tolerance) = tolerance else {
        let (tps, step) = steps
            .iter()
            .filter_map(|s| Some((s.figures().tps()?, s)))
            .max_by(|a, b| a.0.total_cmp(&b.0))?;
        let at = table::at(capacity, &step.value);
        return Some(format!("{} tps at {at}", fmt_f(tps, 1)));
    };
    let tried: Vec<Tried> = steps
        .iter()
        .filter_map(|s| {
            Some(Tried {
                rate: s.x()?,
                met: s.verdict.as_ref()?.met,
            })
        })
        .collect();
    let best = search::outcome(&tried, tolerance).found?;
    let target = capacity.search.as_ref().map_or("", |s| s.target.as_str());
    Some(format!("-R {best} met {target}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_steps_line_says_where_the_sweep_is_how_long_is_left_and_the_best() {
        let s = StepStart {
            step: 2,
            of: 4,
            at_most: false,
            what: "clients=2".into(),
            left_s: left(&[10.2], Some(7.0), 3),
            best: Some("244.9 tps at clients=1".into()),
        };
        assert_eq!(
            s.line(),
            "step 2/4: clients=2; about 31 s left; best so far: 244.9 tps at clients=1"
        );
        let s = StepStart {
            step: 1,
            of: 12,
            at_most: true,
            what: "without -R (the clients' most)".into(),
            left_s: left(&[], Some(3599.0), 12),
            best: None,
        };
        assert_eq!(
            s.line(),
            "step 1 of at most 12: without -R (the clients' most); at most 12 h left"
        );
        assert_eq!(left(&[], None, 3), None);
        assert_eq!(duration(185.0), "3 min 5 s");
        assert_eq!(duration(120.0), "2 min");
        assert_eq!(duration(7800.0), "2 h 10 min");
    }

    /// #43: a last step of under a second was announced "about 0 s left".
    #[test]
    fn time_left_is_rounded_up_and_under_a_second_said_so() {
        let line = |left_s: f64| {
            StepStart {
                step: 3,
                of: 3,
                at_most: false,
                what: "clients=4".into(),
                left_s: Some(left_s),
                best: None,
            }
            .line()
        };
        assert_eq!(line(0.4), "step 3/3: clients=4; under 1 s left");
        assert_eq!(line(1.2), "step 3/3: clients=4; about 2 s left");
        assert_eq!(duration(59.2), "1 min");
    }

    fn step(n: u32, value: &str, tps: f64, met: Option<bool>) -> Step {
        use pgbench_results::synthetic::{run, Spec};
        let file = pgbench_results::ResultsFile::from_run(
            run(&Spec::tpcb(u64::from(n), 10, tps, 1000.0)),
            Default::default(),
        );
        Step {
            step: n,
            value: value.into(),
            round: 1,
            role: None,
            verdict: met.map(|met| pgbench_results::capacity::Verdict { met, why: vec![] }),
            file,
        }
    }

    #[test]
    fn the_best_so_far_is_a_sweeps_highest_tps_and_a_searchs_rate_below_every_miss() {
        let sweep = Capacity {
            kind: pgbench_results::capacity::Kind::Sweep,
            parameter: "clients".into(),
            values: vec!["1".into(), "2".into()],
            repeat: 1,
            search: None,
            found: None,
            representative: None,
            stopped: None,
        };
        let steps = [step(1, "1", 500.0, None), step(2, "2", 900.0, None)];
        let top = best(&sweep, &steps, None).unwrap();
        assert!(
            top.starts_with('9') && top.ends_with(" tps at clients=2"),
            "{top}"
        );
        let search = Capacity {
            kind: pgbench_results::capacity::Kind::Search,
            parameter: "rate".into(),
            values: vec![],
            search: Some(pgbench_results::capacity::SearchSpec {
                target: "p99<=20ms".into(),
                tolerance: 0.05,
                max_steps: 12,
                fail_if_below: None,
            }),
            ..sweep
        };
        // 778.2 met, then missed when run again: no longer the best.
        let steps = [
            step(1, pgbench_results::capacity::CLOSED_LOOP, 900.0, None),
            step(2, "754.1", 750.0, Some(true)),
            step(3, "778.2", 770.0, Some(true)),
        ];
        assert_eq!(
            best(&search, &steps, Some(0.05)).unwrap(),
            "-R 778.2 met p99<=20ms"
        );
        let mut steps = steps.to_vec();
        steps.push(step(4, "778.2", 770.0, Some(false)));
        assert_eq!(
            best(&search, &steps, Some(0.05)).unwrap(),
            "-R 754.1 met p99<=20ms"
        );
        assert_eq!(best(&search, &steps[..1], Some(0.05)), None);
    }
}
