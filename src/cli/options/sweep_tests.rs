//! A sweep's step plans, from the command line that asks for the sweep
//! (`crate::capacity::step`).

use super::{interpret, Action, Env};
use crate::bench::plan::BenchPlan;
use crate::capacity::plan::CapacityPlan;
use crate::capacity::step::step_plan;

struct NoEnv;

impl Env for NoEnv {
    fn var(&self, _: &str) -> Option<String> {
        None
    }
    fn read_file(&self, _: &str) -> std::io::Result<String> {
        // Reads :x, so that a sweep over it changes what runs.
        Ok("SELECT :x;\n".into())
    }
    fn os_user(&self) -> Option<String> {
        Some("u".into())
    }
    fn ensure_open_files(&self, _: u64) -> Result<(), crate::sys::LimitError> {
        Ok(())
    }
}

fn plan(args: &[&str]) -> (BenchPlan, CapacityPlan) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    match interpret("pgbench", &args, &NoEnv).outcome.unwrap() {
        Action::Sweep { base, capacity, .. } => (*base, capacity),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_clients_step_takes_j_as_given_or_its_clients_and_a_step_its_own_log_and_seed() {
    let (base, c) = plan(&[
        "-j",
        "4",
        "-l",
        "--sweep=clients=2,8",
        "-T",
        "5",
        "-f",
        "a.sql",
    ]);
    assert_eq!(base.settings.threads, 1, "pgbench caps -j at -c 1");
    let two = step_plan(&c, &base, Some("2"), 1, &no_digests);
    assert_eq!((two.settings.clients, two.settings.threads), (2, 2));
    let eight = step_plan(&c, &base, Some("8"), 2, &no_digests);
    assert_eq!((eight.settings.clients, eight.settings.threads), (8, 4));
    assert_eq!(eight.log.unwrap().prefix, "pgbench_log.step2");
    let (seeded, c) = plan(&[
        "--random-seed=5",
        "--sweep=rate=10,20",
        "-T",
        "5",
        "-f",
        "a.sql",
    ]);
    let step = step_plan(&c, &seeded, Some("20"), 2, &no_digests);
    assert_eq!((step.random_seed, step.settings.rate), (5, Some(20.0)));
}

#[test]
fn a_variable_step_replaces_its_definition_and_a_search_sets_or_clears_the_rate() {
    let (base, c) = plan(&["-D", "x=1", "-D", "y=2", "--sweep=x=5,6", "-f", "a.sql"]);
    let step = step_plan(&c, &base, Some("6"), 2, &no_digests);
    assert_eq!(
        step.defines,
        vec![("x".into(), "6".into()), ("y".into(), "2".into())]
    );
    let (base, c) = plan(&["--find-max-rate=p99<=5ms", "-T", "5", "-f", "a.sql"]);
    assert_eq!(
        step_plan(&c, &base, None, 1, &no_digests).settings.rate,
        None
    );
    assert_eq!(
        step_plan(&c, &base, Some("948.7"), 2, &no_digests)
            .settings
            .rate,
        Some(948.7)
    );
    assert_eq!(c.option_value(), "p99<=5ms");
}

/// A plan without `--worker` has no digests to refresh.
fn no_digests(_: &BenchPlan) -> String {
    String::new()
}

/// What a sweep would override or could not change is refused, not run: `-c` under a
/// clients sweep, `-R` under a rate sweep or a search, a variable no script reads, a
/// value given twice.
#[test]
fn a_sweep_refuses_what_it_would_override_ignore_or_average() {
    let refused = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match interpret("pgbench", &args, &NoEnv).outcome {
            Err(e) => e.to_string(),
            Ok(a) => panic!("ran {a:?}"),
        }
    };
    let t = ["-T", "5", "-f", "a.sql"];
    fn with<'a>(extra: &[&'a str], t: &[&'a str]) -> Vec<&'a str> {
        [extra, t].concat()
    }
    assert_eq!(
        refused(&with(&["-c", "8", "--sweep=clients=2,4"], &t)),
        "-c would be overridden: --sweep=clients sets it for each step; leave -c out"
    );
    assert_eq!(
        refused(&with(&["-R", "50", "--sweep=rate=10,20"], &t)),
        "-R would be overridden: --sweep=rate sets it for each step; leave -R out"
    );
    assert_eq!(
        refused(&with(&["-R", "50", "--find-max-rate=p99<=5ms"], &t)),
        "-R would be overridden: --find-max-rate sets it for each step; leave -R out"
    );
    assert_eq!(
        refused(&with(&["--sweep=foo=1,2"], &t)),
        "--sweep over :foo would change nothing: no script reads it"
    );
    assert_eq!(
        refused(&with(&["--sweep=clients=4,8,04"], &t)),
        "--sweep value \"04\" for clients is given twice: each value is one step (--repeat=N runs each N times)"
    );
    assert_eq!(
        refused(&with(&["--sweep=rate=10,10.0"], &t)),
        "--sweep value \"10.0\" for rate is given twice: each value is one step (--repeat=N runs each N times)"
    );
    // what no sweep overrides still goes with it
    let args: Vec<String> = with(&["-c", "8", "--sweep=x=1,2"], &t)
        .iter()
        .map(|s| s.to_string())
        .collect();
    assert!(matches!(
        interpret("pgbench", &args, &NoEnv).outcome,
        Ok(Action::Sweep { .. })
    ));
}
