//! Load shapes in stages (`--rate-stages`, `--client-stages`, a scenario's
//! `rate_stages`/`client_stages`): the typed stage plan parsed from
//! `DURATION:VALUE[,...]`, and the pure functions of time that the run reads from it:
//! the value in force at an instant (it moves linearly from the previous stage's
//! target to this one over the stage), the `-R` schedule's next Poisson slot under a
//! rate that changes ([`RateProfile`]), and when each client is active under a number
//! of clients that changes ([`ClientProfile`]). Times here are µs from the first
//! stage's start; placing them on the run clock is the caller's business.

use pgbench_script::prng::Prng;

/// One stage: over `duration_us`, the value moves to `target`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stage {
    pub duration_us: i64,
    pub target: f64,
}

/// A stage list as typed: `30s:100,5m:500`. The sum of the durations is the run's
/// length.
#[derive(Debug, Clone, PartialEq)]
pub struct Stages {
    pub stages: Vec<Stage>,
}

/// Why a stage list does not parse; the caller names the option, file or key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StageError {
    #[error("no stage given")]
    Empty,
    #[error("stage {index} \"{text}\" is not DURATION:VALUE")]
    Shape { index: usize, text: String },
    #[error("stage {index} has an invalid duration \"{text}\" (a whole number of seconds, with s, m or h: 30s, 5m)")]
    Duration { index: usize, text: String },
    #[error("stage {index} has an invalid value \"{text}\" ({expected})")]
    Value {
        index: usize,
        text: String,
        expected: &'static str,
    },
    #[error("the stages last no time at all")]
    NoTime,
    #[error("the stages last too long ({seconds} s at most)")]
    TooLong { seconds: i64 },
}

/// The longest run the stages may describe: `-T`'s range, in seconds.
const MAX_SECONDS: i64 = i32::MAX as i64;

impl Stages {
    /// Parses `DURATION:VALUE[,...]`; the values are numbers of at least 0 (rates
    /// may have a fraction, as `-R` does).
    pub fn parse(text: &str) -> Result<Stages, StageError> {
        Stages::parse_with(text, false)
    }

    /// Parses `DURATION:CLIENTS[,...]`: the values are whole numbers of clients.
    pub fn parse_clients(text: &str) -> Result<Stages, StageError> {
        Stages::parse_with(text, true)
    }

    fn parse_with(text: &str, whole: bool) -> Result<Stages, StageError> {
        if text.trim().is_empty() {
            return Err(StageError::Empty);
        }
        let stages = text
            .split(',')
            .enumerate()
            .map(|(i, part)| parse_stage(i + 1, part.trim(), whole))
            .collect::<Result<Vec<_>, _>>()?;
        let total: i64 = stages.iter().map(|s| s.duration_us).sum();
        if total == 0 {
            return Err(StageError::NoTime);
        }
        if total > MAX_SECONDS * 1_000_000 {
            return Err(StageError::TooLong {
                seconds: MAX_SECONDS,
            });
        }
        Ok(Stages { stages })
    }

    /// The list as it parses again: `6s:100,6s:500`.
    pub fn spec(&self) -> String {
        self.stages
            .iter()
            .map(|s| format!("{}s:{}", s.duration_us / 1_000_000, s.target))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The stages' whole length, µs.
    pub fn total_us(&self) -> i64 {
        self.stages.iter().map(|s| s.duration_us).sum()
    }

    /// The stages' whole length in seconds (whole, as the durations are).
    pub fn total_s(&self) -> i64 {
        self.total_us() / 1_000_000
    }

    /// The largest target.
    pub fn max_target(&self) -> f64 {
        self.stages.iter().map(|s| s.target).fold(0.0, f64::max)
    }

    /// Each stage's start and end, µs from the first stage's start.
    pub fn spans(&self) -> Vec<(i64, i64)> {
        let mut at = 0;
        self.stages
            .iter()
            .map(|s| {
                let span = (at, at + s.duration_us);
                at += s.duration_us;
                span
            })
            .collect()
    }

    /// The value in force at `t_us` from the first stage's start, the first stage
    /// moving from `start`: before the stages, `start`; after them, the last target.
    pub fn value_at(&self, start: f64, t_us: i64) -> f64 {
        let mut from = start;
        let mut at = 0;
        if t_us < 0 {
            return start;
        }
        for s in &self.stages {
            if t_us < at + s.duration_us {
                let done = (t_us - at) as f64 / s.duration_us as f64;
                return from + (s.target - from) * done;
            }
            from = s.target;
            at += s.duration_us;
        }
        from
    }

    /// The stage `t_us` falls in (the last one from its end on; the first before).
    pub fn index_at(&self, t_us: i64) -> usize {
        self.spans()
            .iter()
            .position(|&(_, end)| t_us < end)
            .unwrap_or(self.stages.len() - 1)
    }
}

fn parse_stage(index: usize, text: &str, whole: bool) -> Result<Stage, StageError> {
    let shape = || StageError::Shape {
        index,
        text: text.to_string(),
    };
    let (duration, value) = text.split_once(':').ok_or_else(shape)?;
    let duration_us = parse_duration(duration.trim()).ok_or_else(|| StageError::Duration {
        index,
        text: duration.trim().to_string(),
    })?;
    let value = value.trim();
    let bad_value = |expected| StageError::Value {
        index,
        text: value.to_string(),
        expected,
    };
    let target = if whole {
        value
            .parse::<u32>()
            .ok()
            .filter(|&n| n <= i32::MAX as u32)
            .map(f64::from)
            .ok_or_else(|| bad_value("a whole number of clients, 0 or more"))?
    } else {
        value
            .parse::<f64>()
            .ok()
            .filter(|r| r.is_finite() && *r >= 0.0)
            .ok_or_else(|| bad_value("a rate of 0 or more transactions per second"))?
    };
    Ok(Stage {
        duration_us,
        target,
    })
}

/// `30`, `30s`, `5m`, `1h`: whole seconds, µs.
fn parse_duration(text: &str) -> Option<i64> {
    let (digits, unit) = match text.find(|c: char| !c.is_ascii_digit()) {
        Some(at) => text.split_at(at),
        None => (text, "s"),
    };
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3_600,
        _ => return None,
    };
    if digits.is_empty() {
        return None;
    }
    let seconds = digits.parse::<i64>().ok()?.checked_mul(scale)?;
    (seconds <= MAX_SECONDS).then(|| seconds * 1_000_000)
}

/// `--rate-stages` for one pgbench thread's schedule: the rate moves from `start`
/// (`-R`, or 0) through the stages; each thread draws its share (the rate over the
/// number of threads), as pgbench's `throttle_delay` does.
#[derive(Debug, Clone, PartialEq)]
pub struct RateProfile {
    pub start: f64,
    pub stages: Stages,
    /// `-j` (the threads of the whole run under `--worker`).
    pub threads: usize,
}

impl RateProfile {
    /// The thread's next slot after `trigger_us` (µs from the first stage's start):
    /// a Poisson process whose rate is the one in force at each instant, drawn by
    /// inversion: an exponential draw of the thread's generator (as pgbench's
    /// `getPoissonRand` takes one uniform draw a slot) is the expected number of
    /// slots to wait, walked along the rate's integral. `None` when the stages end
    /// first.
    pub fn next_slot(&self, trigger_us: i64, rng: &mut Prng) -> Option<i64> {
        let draw = -(1.0 - rng.double()).ln();
        self.advance(trigger_us, draw)
    }

    /// The instant from which `events` expected slots have passed since `from_us`.
    fn advance(&self, from_us: i64, mut events: f64) -> Option<i64> {
        if events <= 0.0 {
            return Some(from_us);
        }
        // Slots per µs for this thread at a rate.
        let per_us = |rate: f64| rate / (self.threads as f64 * 1_000_000.0);
        let mut t = from_us as f64;
        if t < 0.0 {
            // Before the stages (a warm-up): the start rate.
            let lambda = per_us(self.start);
            if lambda > 0.0 && events / lambda <= -t {
                return Some((t + events / lambda).round() as i64);
            }
            events -= lambda * -t;
            t = 0.0;
        }
        let mut from_rate = self.start;
        let mut at = 0.0;
        for s in &self.stages.stages {
            let end = at + s.duration_us as f64;
            if t < end {
                // The rate is linear over the stage: λ(x) = λt + k (x - t).
                let k = per_us(s.target - from_rate) / s.duration_us as f64;
                let lambda_t = per_us(from_rate) + k * (t - at);
                let span = end - t;
                let available = lambda_t * span + k / 2.0 * span * span;
                if events <= available {
                    // Solve k/2 d² + λt d = events for the smaller root, written
                    // so that it holds for k of either sign and for k = 0.
                    let root = (lambda_t * lambda_t + 2.0 * k * events).max(0.0).sqrt();
                    let d = 2.0 * events / (lambda_t + root);
                    return Some((t + d.min(span)).round() as i64);
                }
                events -= available;
                t = end;
            }
            from_rate = s.target;
            at = end;
        }
        None
    }
}

/// `--client-stages`: how many clients are active at each instant; client `i`
/// (0-based, this run's numbering) is active while the count, moving linearly from
/// `start` through the stages, is at least `i + 1`.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientProfile {
    pub start: f64,
    pub stages: Stages,
}

/// The count is compared with this slack, so that a count reached exactly at a
/// stage's end (3.0 computed as 2.9999999) counts.
const COUNT_SLACK: f64 = 1e-9;

impl ClientProfile {
    /// Whether client `i` is active at `t_us` (µs from the first stage's start).
    pub fn active(&self, client: usize, t_us: i64) -> bool {
        self.stages.value_at(self.start, t_us) + COUNT_SLACK >= (client + 1) as f64
    }

    /// Client `i`'s next instant of activity at or after `t_us`: `Some(t_us)` if it is
    /// active then, `None` if it never is again before the stages end.
    pub fn next_active(&self, client: usize, t_us: i64) -> Option<i64> {
        if self.active(client, t_us) {
            return Some(t_us);
        }
        let need = (client + 1) as f64;
        let mut from = self.start;
        for (s, (begin, end)) in self.stages.stages.iter().zip(self.stages.spans()) {
            if end > t_us && s.target + COUNT_SLACK >= need {
                // The count crosses `need` within this stage, rising.
                let at = if from + COUNT_SLACK >= need {
                    begin
                } else {
                    let done = (need - from) / (s.target - from);
                    begin + (done * s.duration_us as f64).ceil() as i64
                };
                return Some(at.max(t_us));
            }
            from = s.target;
        }
        None
    }

    /// When client `i`, active at `t_us`, next stops being active (`None`: not before
    /// the stages end).
    pub fn active_until(&self, client: usize, t_us: i64) -> Option<i64> {
        let need = (client + 1) as f64;
        let mut from = self.start;
        for (s, (begin, end)) in self.stages.stages.iter().zip(self.stages.spans()) {
            if end > t_us && s.target + COUNT_SLACK < need {
                let at = if from + COUNT_SLACK < need {
                    begin
                } else {
                    let done = (from - need) / (from - s.target);
                    begin + (done * s.duration_us as f64).floor() as i64 + 1
                };
                return Some(at.max(t_us));
            }
            from = s.target;
        }
        None
    }

    /// The number of clients the run connects: enough for the start and every
    /// target.
    pub fn clients(&self) -> usize {
        self.stages.max_target().max(self.start) as usize
    }
}

/// A run's stages, as the plan holds them: the rate's or the clients'.
#[derive(Debug, Clone, PartialEq)]
pub enum StagePlan {
    Rate(RateProfile),
    Clients(ClientProfile),
}

impl StagePlan {
    /// The stage list.
    pub fn stages(&self) -> &Stages {
        match self {
            StagePlan::Rate(p) => &p.stages,
            StagePlan::Clients(p) => &p.stages,
        }
    }

    /// The value the first stage moves from.
    pub fn start(&self) -> f64 {
        match self {
            StagePlan::Rate(p) => p.start,
            StagePlan::Clients(p) => p.start,
        }
    }

    /// What the stages move, as the results file names it.
    pub fn shape(&self) -> pgbench_results::stages::StageShape {
        match self {
            StagePlan::Rate(_) => pgbench_results::stages::StageShape::Rate,
            StagePlan::Clients(_) => pgbench_results::stages::StageShape::Clients,
        }
    }

    /// The option that gave them.
    pub fn option(&self) -> &'static str {
        match self {
            StagePlan::Rate(_) => "--rate-stages",
            StagePlan::Clients(_) => "--client-stages",
        }
    }

    /// Where the stages sit on the run clock: they end at the `-T` deadline
    /// (`end_us`), which their total set.
    pub fn on_clock(&self, end_us: i64) -> StageClock {
        let origin_us = end_us - self.stages().total_us();
        StageClock {
            origin_us,
            ends_us: self
                .stages()
                .spans()
                .iter()
                .map(|&(_, end)| origin_us + end)
                .collect(),
        }
    }

    /// Each stage's window and targets; `measured_from_us`: where the report's
    /// seconds count from.
    pub fn windows(
        &self,
        clock: &StageClock,
        measured_from_us: i64,
    ) -> Vec<pgbench_results::stages::StageWindow> {
        let mut from = self.start();
        self.stages()
            .stages
            .iter()
            .zip(self.stages().spans())
            .map(|(s, (begin, end))| {
                let secs = |t: i64| (clock.origin_us + t - measured_from_us) as f64 / 1e6;
                let w = pgbench_results::stages::StageWindow {
                    from,
                    target: s.target,
                    start_s: secs(begin).max(0.0),
                    end_s: secs(end),
                };
                from = s.target;
                w
            })
            .collect()
    }

    /// The stage in force at `t_us` on the run clock and the value then. Steps
    /// (stages of no time) are not counted: the numbers are those of the report's
    /// block.
    pub fn at(&self, clock: &StageClock, t_us: i64) -> StageAt {
        let rel = t_us - clock.origin_us;
        let value = self.stages().value_at(self.start(), rel);
        let all = &self.stages().stages;
        let timed = |upto: usize| all[..upto].iter().filter(|s| s.duration_us > 0).count();
        StageAt {
            index: timed(self.stages().index_at(rel) + 1),
            count: timed(all.len()),
            value: match self {
                StagePlan::Rate(_) => value,
                // The clients active then: client `i` runs while the count is at
                // least `i + 1`.
                StagePlan::Clients(p) => (value + COUNT_SLACK).floor().min(p.clients() as f64),
            },
        }
    }

    /// [`StagePlan::at`] for a progress line: `stage 2/3, rate 233.3`.
    pub fn describe_at(&self, clock: &StageClock, t_us: i64) -> String {
        let StageAt {
            index,
            count,
            value,
        } = self.at(clock, t_us);
        match self {
            StagePlan::Rate(_) => format!("stage {index}/{count}, rate {value:.1}"),
            StagePlan::Clients(_) => format!("stage {index}/{count}, clients {value}"),
        }
    }
}

/// Where the stages are at an instant: what a `-P` line and the metrics endpoint show.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StageAt {
    /// The stage in force, from 1, steps not counted.
    pub index: usize,
    /// The stages with time, as the report's block has them.
    pub count: usize,
    /// The `-R` schedule's rate then (transactions per second), or the clients
    /// active then.
    pub value: f64,
}

/// The stages placed on the run clock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageClock {
    /// The first stage's start.
    pub origin_us: i64,
    /// Each stage's end.
    pub ends_us: Vec<i64>,
}

impl StageClock {
    /// The stage a transaction that ended at `end_us` belongs to: the one whose
    /// window holds it (the last one after the end, the first before the start).
    pub fn index_of(&self, end_us: i64) -> usize {
        self.ends_us
            .partition_point(|&end| end <= end_us)
            .min(self.ends_us.len() - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: i64 = 1_000_000;

    #[test]
    fn stages_parse_with_their_units() {
        let s = Stages::parse("6s:100, 1m:500.5,1h:0,30:7").unwrap();
        assert_eq!(
            s.stages,
            vec![
                Stage {
                    duration_us: 6 * S,
                    target: 100.0
                },
                Stage {
                    duration_us: 60 * S,
                    target: 500.5
                },
                Stage {
                    duration_us: 3_600 * S,
                    target: 0.0
                },
                Stage {
                    duration_us: 30 * S,
                    target: 7.0
                },
            ]
        );
        assert_eq!(s.total_s(), 3_696);
        assert_eq!(s.spec(), "6s:100,60s:500.5,3600s:0,30s:7");
        assert_eq!(Stages::parse(&s.spec()), Ok(s.clone()));
        assert_eq!(s.max_target(), 500.5);
        assert_eq!(s.spans()[1], (6 * S, 66 * S));
        // A zero-length stage is a step.
        assert_eq!(Stages::parse_clients("0s:4,5s:4").unwrap().total_s(), 5);
    }

    #[test]
    fn bad_stage_lists_say_which_stage_and_why() {
        let err = |text: &str| Stages::parse(text).unwrap_err().to_string();
        assert_eq!(err(""), "no stage given");
        assert_eq!(err("5s"), "stage 1 \"5s\" is not DURATION:VALUE");
        assert_eq!(
            err("5s:1,5x:3"),
            "stage 2 has an invalid duration \"5x\" (a whole number of seconds, with s, m or h: 30s, 5m)"
        );
        assert!(err("s:1").starts_with("stage 1 has an invalid duration \"s\""));
        assert!(err("-5s:1").starts_with("stage 1 has an invalid duration \"-5s\""));
        assert_eq!(
            err("5s:-1"),
            "stage 1 has an invalid value \"-1\" (a rate of 0 or more transactions per second)"
        );
        assert!(err("5s:nan").contains("invalid value \"nan\""));
        assert_eq!(
            Stages::parse_clients("5s:2.5").unwrap_err().to_string(),
            "stage 1 has an invalid value \"2.5\" (a whole number of clients, 0 or more)"
        );
        assert_eq!(err("0s:5"), "the stages last no time at all");
        assert!(err("99999999999h:5").contains("invalid duration"));
        assert!(err("2147483647s:5,1s:5").starts_with("the stages last too long"));
    }

    #[test]
    fn the_value_moves_linearly_from_the_previous_target() {
        let s = Stages::parse("10s:100,10s:500,10s:500").unwrap();
        assert_eq!(s.value_at(0.0, -S), 0.0);
        assert_eq!(s.value_at(0.0, 5 * S), 50.0);
        assert_eq!(s.value_at(0.0, 10 * S), 100.0);
        assert_eq!(s.value_at(0.0, 15 * S), 300.0);
        assert_eq!(s.value_at(100.0, 5 * S), 100.0);
        assert_eq!(s.value_at(0.0, 99 * S), 500.0);
        assert_eq!(s.index_at(0), 0);
        assert_eq!(s.index_at(10 * S), 1);
        assert_eq!(s.index_at(99 * S), 2);
    }

    /// Slots per stage over many seeds: the mean count follows the rate's integral.
    #[test]
    fn the_mean_number_of_slots_per_stage_follows_the_rate() {
        let profile = RateProfile {
            start: 100.0,
            stages: Stages::parse("6s:100,6s:500,6s:500").unwrap(),
            threads: 2,
        };
        let spans = profile.stages.spans();
        let mut counts = [0usize; 3];
        let runs = 40;
        for seed in 0..runs {
            let mut rng = Prng::seed(seed);
            let mut trigger = 0;
            while let Some(at) = profile.next_slot(trigger, &mut rng) {
                assert!(at >= trigger);
                trigger = at;
                let stage = spans.iter().position(|&(_, end)| at < end).unwrap();
                counts[stage] += 1;
            }
        }
        // One thread of two: half of 600, 1800 and 3000.
        for (count, expected) in counts.iter().zip([300.0, 900.0, 1500.0]) {
            let mean = *count as f64 / runs as f64;
            assert!((mean / expected - 1.0).abs() < 0.03, "{mean} vs {expected}");
        }
    }

    #[test]
    fn a_rate_from_zero_starts_at_once_and_a_falling_rate_slows_down() {
        let rising = RateProfile {
            start: 0.0,
            stages: Stages::parse("10s:1000").unwrap(),
            threads: 1,
        };
        // Half of the slots come in the last 30% of the ramp: ∫ of a line.
        assert_eq!(rising.advance(0, 0.0), Some(0));
        // 1000/s reached at 10 s: 5000 slots in all, 1250 by 5 s.
        assert_eq!(rising.advance(0, 1250.0), Some(5 * S));
        assert_eq!(rising.advance(0, 5000.0), Some(10 * S));
        assert_eq!(rising.advance(0, 5000.1), None);
        let falling = RateProfile {
            start: 1000.0,
            stages: Stages::parse("10s:0").unwrap(),
            threads: 1,
        };
        assert_eq!(falling.advance(0, 3750.0), Some(5 * S));
        assert_eq!(falling.advance(0, 5000.0), Some(10 * S));
        // A step: a stage of no time moves the rate at once.
        let step = RateProfile {
            start: 0.0,
            stages: Stages::parse("0s:1000,1s:1000").unwrap(),
            threads: 2,
        };
        assert_eq!(step.advance(0, 250.0), Some(S / 2));
        assert_eq!(step.advance(0, 500.1), None);
        // Before the stages (a warm-up), the start rate: 1000/s.
        assert_eq!(falling.advance(-S, 500.0), Some(-S / 2));
        assert_eq!(falling.advance(-S, 1000.0 + 3750.0), Some(5 * S));
    }

    #[test]
    fn clients_join_as_the_count_reaches_them_and_leave_as_it_falls() {
        let p = ClientProfile {
            start: 1.0,
            stages: Stages::parse_clients("5s:1,5s:4,5s:4,3s:0").unwrap(),
        };
        assert_eq!(p.clients(), 4);
        assert!(p.active(0, 0));
        assert!(!p.active(1, 0));
        // 1 → 4 over 5..10 s: client 1 joins when the count reaches 2, at 5 + 5/3 s.
        assert_eq!(p.next_active(1, 0), Some(5 * S + 1_666_667));
        assert_eq!(p.next_active(3, 0), Some(10 * S));
        assert_eq!(p.next_active(3, 12 * S), Some(12 * S));
        // 4 → 0 over 15..18 s: client 3 leaves as soon as the count is below 4.
        assert_eq!(p.active_until(3, 12 * S), Some(15 * S + 1));
        assert_eq!(p.active_until(0, 12 * S), Some(17 * S + 250_001));
        assert_eq!(p.next_active(3, 16 * S), None);
        assert_eq!(p.active_until(0, 0), Some(17 * S + 250_001));
        // Steps: a zero-length stage moves the count at once.
        let steps = ClientProfile {
            start: 1.0,
            stages: Stages::parse_clients("5s:1,0s:3,5s:3").unwrap(),
        };
        assert_eq!(steps.next_active(2, 0), Some(5 * S));
        assert!(steps.active(2, 5 * S));
        assert!(!steps.active(2, 5 * S - 1));
    }

    #[test]
    fn the_stage_and_value_at_an_instant_number_the_stages_as_the_block() {
        let rate = StagePlan::Rate(RateProfile {
            start: 0.0,
            stages: Stages::parse("3s:50,3s:200").unwrap(),
            threads: 1,
        });
        // Six seconds of stages ending at 16 s on the run clock.
        let clock = rate.on_clock(16 * S);
        assert_eq!(clock.origin_us, 10 * S);
        let at = |plan: &StagePlan, t| {
            let a = plan.at(&plan.on_clock(16 * S), t);
            (a.index, a.count, a.value)
        };
        // In a warm-up, before the stages: the first one's start.
        assert_eq!(at(&rate, 9 * S), (1, 2, 0.0));
        assert_eq!(at(&rate, 10 * S), (1, 2, 0.0));
        assert_eq!(at(&rate, 11_500_000), (1, 2, 25.0));
        assert_eq!(at(&rate, 14_500_000), (2, 2, 125.0));
        assert_eq!(at(&rate, 99 * S), (2, 2, 200.0));
        assert_eq!(
            rate.describe_at(&clock, 14_500_000),
            "stage 2/2, rate 125.0"
        );
        // Steps are not counted; the clients are whole, as the -P line has them.
        let clients = StagePlan::Clients(ClientProfile {
            start: 1.0,
            stages: Stages::parse_clients("0s:2,3s:2,0s:4,3s:0").unwrap(),
        });
        assert_eq!(at(&clients, 11 * S), (1, 2, 2.0));
        assert_eq!(at(&clients, 14 * S), (2, 2, 2.0));
        assert_eq!(at(&clients, 13 * S), (2, 2, 4.0));
        assert_eq!(clients.describe_at(&clock, 13 * S), "stage 2/2, clients 4");
        // Before a first stage that is a step, none has begun: stage 0, the start.
        assert_eq!(at(&clients, 9 * S), (0, 2, 1.0));
    }
}
