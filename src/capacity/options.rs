//! The command line of sweeps and searches: `--sweep`, `--repeat`, `--find-max-rate`,
//! `--search-tolerance`, `--search-steps`, `--fail-if-below`. Each value is read as its
//! option is met ([`CapacityDraft::sweep`], [`CapacityDraft::repeat`], ...); after pgbench's own checks,
//! [`CapacityDraft::finish`] checks them together with the run's other options and
//! gives the [`CapacityPlan`]. Pure.

use super::plan::{CapacityPlan, Parameter, What};
use super::target::{Target, TargetError};
use pgbench_script::cnum::atof;

/// The default `--search-tolerance`, a fraction.
pub const DEFAULT_TOLERANCE: f64 = 0.05;
/// The default `--search-steps`.
pub const DEFAULT_STEPS: u32 = 12;

/// Why the options of a sweep or search are refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CapacityError {
    #[error("invalid --sweep \"{0}\": expected NAME=V1,V2,... where NAME is clients, rate or a script variable")]
    Sweep(String),
    #[error("invalid --sweep value \"{value}\" for {name}: {why}")]
    SweepValue {
        name: String,
        value: String,
        why: &'static str,
    },
    #[error("invalid value \"{value}\" for option {option}: {why}")]
    Value {
        option: &'static str,
        value: String,
        why: &'static str,
    },
    #[error(transparent)]
    Target(#[from] TargetError),
    #[error("{option} needs {needs}")]
    Needs {
        option: &'static str,
        needs: &'static str,
    },
    #[error("{0} cannot be combined with {1}")]
    Together(&'static str, &'static str),
    #[error("--sweep over :{name} would change nothing: {why}")]
    Unchanged { name: String, why: &'static str },
    #[error("--sweep value \"{value}\" for {name} is given twice: each value is one step (--repeat=N runs each N times)")]
    Twice { name: String, value: String },
    #[error("{option} would be overridden: {what} sets it for each step; leave {option} out")]
    Overridden {
        option: &'static str,
        what: &'static str,
    },
}

/// What the options said so far.
#[derive(Debug, Clone, Default)]
pub struct CapacityDraft {
    sweep: Option<(Parameter, Vec<String>)>,
    repeat: Option<u32>,
    search: Option<(Target, String)>,
    tolerance: Option<f64>,
    steps: Option<u32>,
    fail_if_below: Option<f64>,
}

/// What the checks need of the run's other options.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// `-j` as given (1 when not), before pgbench caps it at `-c`.
    pub jobs: usize,
    /// `-T`, when given.
    pub duration: Option<i64>,
    pub worker: bool,
    pub latency_limit: bool,
    pub seed_given: bool,
    /// `--workload`: its script is made from its `-D` options before any step.
    pub workload: bool,
    /// The variables the scripts set themselves (`\set`, `\setshell`, `\setrandstr`),
    /// over whatever `-D` gave.
    pub assigned: Vec<String>,
    /// The variables the scripts read (`:name` anywhere).
    pub read: Vec<String>,
    /// `-c` was given.
    pub clients_given: bool,
    /// `-R` was given.
    pub rate_given: bool,
}

impl CapacityDraft {
    /// `--sweep=NAME=V1,V2,...`.
    pub fn sweep(&mut self, v: &str) -> Result<(), CapacityError> {
        self.sweep = Some(sweep(v)?);
        Ok(())
    }

    /// `--repeat=N`.
    pub fn repeat(&mut self, v: &str) -> Result<(), CapacityError> {
        let n = v
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=1000).contains(n));
        self.repeat = Some(n.ok_or_else(|| bad("--repeat", v, "a count from 1 to 1000"))?);
        Ok(())
    }

    /// `--find-max-rate=TARGET`.
    pub fn find_max_rate(&mut self, v: &str) -> Result<(), CapacityError> {
        self.search = Some((Target::parse(v)?, v.to_string()));
        Ok(())
    }

    /// `--search-tolerance=PCT` (a trailing `%` allowed).
    pub fn search_tolerance(&mut self, v: &str) -> Result<(), CapacityError> {
        let n = v.trim().trim_end_matches('%').trim().parse::<f64>().ok();
        let n = n.filter(|n| *n > 0.0 && *n < 100.0).ok_or_else(|| {
            bad(
                "--search-tolerance",
                v,
                "a percentage above 0 and below 100, e.g. 5%",
            )
        })?;
        self.tolerance = Some(n / 100.0);
        Ok(())
    }

    /// `--search-steps=N`.
    pub fn search_steps(&mut self, v: &str) -> Result<(), CapacityError> {
        let n = v
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (3..=1000).contains(n));
        self.steps = Some(n.ok_or_else(|| bad("--search-steps", v, "a count from 3 to 1000"))?);
        Ok(())
    }

    /// `--fail-if-below=RATE`.
    pub fn fail_if_below(&mut self, v: &str) -> Result<(), CapacityError> {
        let r = atof(v);
        if !(r.is_finite() && r > 0.0) {
            let why = "a rate in transactions per second above 0";
            return Err(bad("--fail-if-below", v, why));
        }
        self.fail_if_below = Some(r);
        Ok(())
    }

    /// Whether any was given (then the run is a benchmark's).
    pub fn any(&self) -> bool {
        self.sweep.is_some()
            || self.repeat.is_some()
            || self.search.is_some()
            || self.tolerance.is_some()
            || self.steps.is_some()
            || self.fail_if_below.is_some()
    }

    /// The options checked together and with the run's: the plan, if they ask for one.
    pub fn finish(self, run: RunOptions) -> Result<Option<CapacityPlan>, CapacityError> {
        if self.repeat.is_some() && self.sweep.is_none() {
            return Err(CapacityError::Needs {
                option: "--repeat",
                needs: "--sweep",
            });
        }
        if self.search.is_none() {
            for (given, option) in [
                (self.tolerance.is_some(), "--search-tolerance"),
                (self.steps.is_some(), "--search-steps"),
                (self.fail_if_below.is_some(), "--fail-if-below"),
            ] {
                if given {
                    return Err(CapacityError::Needs {
                        option,
                        needs: "--find-max-rate",
                    });
                }
            }
        }
        let what = match (self.sweep, self.search) {
            (None, None) => return Ok(None),
            (Some(_), Some(_)) => {
                return Err(CapacityError::Together("--sweep", "--find-max-rate"))
            }
            (Some((parameter, values)), None) => {
                match &parameter {
                    Parameter::Variable(name) => variable_sweepable(name, &run)?,
                    Parameter::Clients if run.clients_given => {
                        return Err(CapacityError::Overridden {
                            option: "-c",
                            what: "--sweep=clients",
                        })
                    }
                    Parameter::Rate if run.rate_given => {
                        return Err(CapacityError::Overridden {
                            option: "-R",
                            what: "--sweep=rate",
                        })
                    }
                    _ => {}
                }
                What::Sweep {
                    parameter,
                    values,
                    repeat: self.repeat.unwrap_or(1),
                }
            }
            (None, Some((target, text))) => {
                if run.rate_given {
                    return Err(CapacityError::Overridden {
                        option: "-R",
                        what: "--find-max-rate",
                    });
                }
                if run.duration.is_none() {
                    return Err(CapacityError::Needs {
                        option: "--find-max-rate",
                        needs: "-T (each step runs --warmup, then -T seconds)",
                    });
                }
                if run.worker {
                    return Err(CapacityError::Together(
                        "--find-max-rate",
                        "--worker (each worker would choose rates of its own)",
                    ));
                }
                if target.needs_latency_limit() && !run.latency_limit {
                    return Err(CapacityError::Needs {
                        option: "a late share in --find-max-rate",
                        needs: "-L (late means above it)",
                    });
                }
                What::Search {
                    target,
                    text,
                    tolerance: self.tolerance.unwrap_or(DEFAULT_TOLERANCE),
                    max_steps: self.steps.unwrap_or(DEFAULT_STEPS),
                    fail_if_below: self.fail_if_below,
                }
            }
        };
        Ok(Some(CapacityPlan {
            what,
            jobs: run.jobs.max(1),
            seed_given: run.seed_given,
        }))
    }
}

/// A script variable's sweep changes what the steps run: `-D` reaches it.
fn variable_sweepable(name: &str, run: &RunOptions) -> Result<(), CapacityError> {
    let why = if run.workload {
        "a --workload's script is made from its -D options once, before any step"
    } else if run.assigned.iter().any(|a| a == name) {
        "the script sets it itself, over what -D gives"
    } else if !run.read.iter().any(|r| r == name) {
        "no script reads it"
    } else {
        return Ok(());
    };
    Err(CapacityError::Unchanged {
        name: name.to_string(),
        why,
    })
}

/// An option's value refused, and why.
fn bad(option: &'static str, value: &str, why: &'static str) -> CapacityError {
    CapacityError::Value {
        option,
        value: value.to_string(),
        why,
    }
}

/// `NAME=V1,V2,...`.
fn sweep(v: &str) -> Result<(Parameter, Vec<String>), CapacityError> {
    let bad = || CapacityError::Sweep(v.to_string());
    let (name, list) = v.split_once('=').ok_or_else(bad)?;
    let parameter = match name.trim() {
        "clients" => Parameter::Clients,
        "rate" => Parameter::Rate,
        n if pgbench_script::variables::is_valid_name(n) => Parameter::Variable(n.to_string()),
        _ => return Err(bad()),
    };
    let values: Vec<String> = list.split(',').map(|s| s.trim().to_string()).collect();
    if values.iter().any(String::is_empty) {
        return Err(bad());
    }
    // The same value twice would be averaged as repeats of one step without a word.
    let same = |a: &str, b: &str| match parameter {
        Parameter::Clients => {
            matches!((a.parse::<i64>(), b.parse::<i64>()), (Ok(x), Ok(y)) if x == y)
        }
        Parameter::Rate => atof(a) == atof(b),
        Parameter::Variable(_) => a == b,
    };
    for (i, value) in values.iter().enumerate() {
        if values[..i].iter().any(|earlier| same(earlier, value)) {
            return Err(CapacityError::Twice {
                name: parameter.name().to_string(),
                value: value.clone(),
            });
        }
    }
    for value in &values {
        let why = match parameter {
            Parameter::Clients => value
                .parse::<i64>()
                .ok()
                .filter(|n| (1..=i64::from(i32::MAX)).contains(n))
                .is_none()
                .then_some("a client count is a whole number from 1 to 2147483647"),
            Parameter::Rate => {
                let r = atof(value);
                (!(r.is_finite() && r > 0.0))
                    .then_some("a rate is a number of transactions per second above 0")
            }
            Parameter::Variable(_) => None,
        };
        if let Some(why) = why {
            return Err(CapacityError::SweepValue {
                name: parameter.name().to_string(),
                value: value.clone(),
                why,
            });
        }
    }
    Ok((parameter, values))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The options applied, as the command line's option table names them.
    #[derive(Debug)]
    enum Opt {
        Sweep,
        Repeat,
        FindMaxRate,
        SearchTolerance,
        SearchSteps,
        FailIfBelow,
    }

    /// A run whose scripts read :delay, :aid and :bid.
    fn run() -> RunOptions {
        RunOptions {
            jobs: 4,
            duration: Some(10),
            read: ["delay", "aid", "bid"].map(String::from).to_vec(),
            ..RunOptions::default()
        }
    }

    fn plan(
        options: &[(Opt, &str)],
        run: RunOptions,
    ) -> Result<Option<CapacityPlan>, CapacityError> {
        let mut d = CapacityDraft::default();
        for (opt, v) in options {
            match opt {
                Opt::Sweep => d.sweep(v)?,
                Opt::Repeat => d.repeat(v)?,
                Opt::FindMaxRate => d.find_max_rate(v)?,
                Opt::SearchTolerance => d.search_tolerance(v)?,
                Opt::SearchSteps => d.search_steps(v)?,
                Opt::FailIfBelow => d.fail_if_below(v)?,
            }
        }
        d.finish(run)
    }

    #[test]
    fn sweeps_of_clients_rates_and_variables() {
        let p = plan(&[(Opt::Sweep, "clients=1, 2,4"), (Opt::Repeat, "3")], run())
            .unwrap()
            .unwrap();
        assert_eq!(
            p.what,
            What::Sweep {
                parameter: Parameter::Clients,
                values: vec!["1".into(), "2".into(), "4".into()],
                repeat: 3
            }
        );
        assert_eq!(p.jobs, 4);
        let p = plan(&[(Opt::Sweep, "rate=100,250.5")], run())
            .unwrap()
            .unwrap();
        assert!(matches!(
            p.what,
            What::Sweep {
                parameter: Parameter::Rate,
                ..
            }
        ));
        let p = plan(&[(Opt::Sweep, "delay=1ms,x")], run())
            .unwrap()
            .unwrap();
        assert!(
            matches!(p.what, What::Sweep { parameter: Parameter::Variable(ref n), .. } if n == "delay")
        );
        assert_eq!(plan(&[], run()), Ok(None));
    }

    #[test]
    fn bad_sweeps_and_searches_say_what_is_wrong() {
        let err = |o: &[(Opt, &str)], r| plan(o, r).unwrap_err().to_string();
        assert_eq!(
            err(&[(Opt::Sweep, "clients=1,0")], run()),
            "invalid --sweep value \"0\" for clients: a client count is a whole number from 1 to 2147483647"
        );
        // #43: the most is said, not "from 1 up".
        assert_eq!(
            err(&[(Opt::Sweep, "clients=4294967297")], run()),
            "invalid --sweep value \"4294967297\" for clients: a client count is a whole number from 1 to 2147483647"
        );
        assert!(err(&[(Opt::Sweep, "clients")], run())
            .starts_with("invalid --sweep \"clients\": expected NAME=V1"));
        assert!(err(&[(Opt::Sweep, "rate=1,,2")], run()).starts_with("invalid --sweep"));
        assert!(err(&[(Opt::Sweep, "1x=1")], run()).starts_with("invalid --sweep"));
        assert_eq!(err(&[(Opt::Sweep, "rate=0")], run()), "invalid --sweep value \"0\" for rate: a rate is a number of transactions per second above 0");
        assert_eq!(err(&[(Opt::Repeat, "2")], run()), "--repeat needs --sweep");
        assert_eq!(
            err(&[(Opt::FailIfBelow, "100")], run()),
            "--fail-if-below needs --find-max-rate"
        );
        assert_eq!(
            err(
                &[(Opt::Sweep, "clients=1"), (Opt::FindMaxRate, "p99<=1ms")],
                run()
            ),
            "--sweep cannot be combined with --find-max-rate"
        );
        let t = RunOptions {
            duration: None,
            ..run()
        };
        assert!(err(&[(Opt::FindMaxRate, "p99<=1ms")], t).starts_with("--find-max-rate needs -T"));
        let w = RunOptions {
            worker: true,
            ..run()
        };
        assert!(err(&[(Opt::FindMaxRate, "p99<=1ms")], w)
            .starts_with("--find-max-rate cannot be combined with --worker"));
        assert!(err(&[(Opt::FindMaxRate, "late<=1%")], run())
            .ends_with("needs -L (late means above it)"));
        let sets = RunOptions {
            assigned: vec!["aid".into()],
            ..run()
        };
        assert_eq!(
            err(&[(Opt::Sweep, "aid=1,2")], sets.clone()),
            "--sweep over :aid would change nothing: the script sets it itself, over what -D gives"
        );
        assert!(plan(&[(Opt::Sweep, "bid=1,2")], sets).is_ok());
        assert_eq!(
            err(&[(Opt::Sweep, "cid=1,2")], run()),
            "--sweep over :cid would change nothing: no script reads it"
        );
        let workload = RunOptions {
            workload: true,
            ..run()
        };
        assert!(err(&[(Opt::Sweep, "range_size=1,2")], workload.clone())
            .ends_with("a --workload's script is made from its -D options once, before any step"));
        assert!(plan(&[(Opt::Sweep, "clients=1,2")], workload).is_ok());
        assert!(err(&[(Opt::SearchTolerance, "0")], run())
            .starts_with("invalid value \"0\" for option --search-tolerance"));
        assert!(err(&[(Opt::SearchSteps, "2")], run())
            .starts_with("invalid value \"2\" for option --search-steps"));
    }

    #[test]
    fn a_search_takes_its_defaults_or_what_is_given() {
        let p = plan(&[(Opt::FindMaxRate, "p99<=20ms")], run())
            .unwrap()
            .unwrap();
        assert!(
            matches!(p.what, What::Search { tolerance, max_steps: 12, fail_if_below: None, .. } if tolerance == 0.05)
        );
        let o = [
            (Opt::FindMaxRate, "p99<=20ms"),
            (Opt::SearchTolerance, "2%"),
            (Opt::SearchSteps, "20"),
            (Opt::FailIfBelow, "500"),
        ];
        let p = plan(&o, run()).unwrap().unwrap();
        assert!(
            matches!(p.what, What::Search { tolerance, max_steps: 20, fail_if_below: Some(r), .. } if tolerance == 0.02 && r == 500.0)
        );
    }
}
