//! Seeded runs of stock pgbench 15 reproduced value for value: for each case of
//! `tests/data/eval/seq/cases.txt` (`--random-seed`, `-c`, `-j`, `-t`, `-D`, weighted
//! `-f`), [`SeedPlan`] derives the client and thread generators, the scripts' `\set`
//! expressions are evaluated, and every `\shell echo` line must equal what stock
//! printed (recorded by `scripts/record-stock-eval.sh`).

mod common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{clients, eval_in, parse, RunOptions};
use pgbench_script::ast::{CommandKind, Expr, MetaCommand, ShellArg};
use pgbench_script::parser;
use pgbench_script::prng::choose_script;

const SEQ_DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/eval/seq");

enum Step {
    Set(String, Expr),
    /// `\shell echo ARGS >&2`: the echoed words (`:name` substituted).
    Echo(Vec<String>),
}

/// How scripts are read: by the real parser, or line by line with the test builder.
#[derive(Clone, Copy)]
enum Reader {
    Parser,
    Builder,
}

fn load_script(file: &str, reader: Reader) -> Vec<Step> {
    let text = std::fs::read_to_string(Path::new(SEQ_DIR).join(file)).expect("script");
    if let Reader::Parser = reader {
        let script = parser::parse_script(file, file, &text).expect("stock accepted it");
        return script
            .commands
            .into_iter()
            .map(|c| match c.kind {
                CommandKind::Meta(MetaCommand::Set { var, expr }) => Step::Set(var, expr),
                CommandKind::Meta(MetaCommand::Shell { command, args }) => {
                    assert_eq!(command, "echo");
                    let words = args.into_iter().filter_map(|a| match a {
                        ShellArg::Literal(w) if w == ">&2" => None,
                        ShellArg::Literal(w) => Some(w),
                        ShellArg::Var(name) => Some(format!(":{name}")),
                    });
                    Step::Echo(words.collect())
                }
                other => panic!("unexpected command {other:?}"),
            })
            .collect();
    }
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            if let Some(rest) = l.strip_prefix("\\set ") {
                let (name, expr) = rest.split_once(' ').expect("\\set NAME EXPR");
                Step::Set(name.to_string(), parse(expr).expect(expr))
            } else if let Some(rest) = l.strip_prefix("\\shell echo ") {
                let words = rest.split_whitespace().filter(|w| *w != ">&2");
                Step::Echo(words.map(str::to_string).collect())
            } else {
                panic!("unexpected script line {l}")
            }
        })
        .collect()
}

/// pgbench's dealing of clients to threads: thread i gets
/// `(nclients - dealt + nthreads - i - 1) / (nthreads - i)` consecutive clients.
fn thread_of_clients(nclients: usize, nthreads: usize) -> Vec<usize> {
    let nthreads = nthreads.min(nclients);
    let mut owner = Vec::with_capacity(nclients);
    for i in 0..nthreads {
        let n = (nclients - owner.len() + nthreads - i - 1) / (nthreads - i);
        owner.extend(std::iter::repeat_n(i, n));
    }
    owner
}

fn run_case(name: &str, args: &str, reader: Reader) -> usize {
    let words: Vec<String> = args.split_whitespace().map(str::to_string).collect();
    assert!(
        words.iter().any(|w| w.starts_with("--random-seed=")),
        "{name}: needs --random-seed"
    );
    let o = RunOptions::parse(&words, 0);
    let transactions: usize = words
        .iter()
        .position(|w| w == "-t")
        .map(|i| words[i + 1].parse().unwrap())
        .expect("-t");
    let mut scripts = Vec::new();
    let mut weights = Vec::new();
    for (i, w) in words.iter().enumerate() {
        if w == "-f" {
            let (file, weight) = match words[i + 1].rsplit_once('@') {
                Some((f, w)) => (f, w.parse().unwrap()),
                None => (words[i + 1].as_str(), 1),
            };
            scripts.push(load_script(file, reader));
            weights.push(weight);
        }
    }

    let (mut cl, mut plan) = clients(&o);
    let owner = thread_of_clients(o.clients, o.threads);
    assert_eq!(plan.threads.len(), o.threads.min(o.clients));
    if scripts.len() > 1 {
        // With several clients per thread their script choices interleave in an order
        // that depends on scheduling; the recorded cases avoid that.
        assert!(
            plan.threads.len() == o.clients,
            "{name}: one client per thread needed"
        );
    }

    let mut ours: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (id, client) in cl.iter_mut().enumerate() {
        let lines = ours.entry(id.to_string()).or_default();
        for _ in 0..transactions {
            let script = choose_script(&mut plan.threads[owner[id]].choose, &weights);
            for (n, step) in scripts[script].iter().enumerate() {
                match step {
                    Step::Set(var, expr) => {
                        let v = eval_in(expr, client, script, n + 1)
                            .0
                            .unwrap_or_else(|e| panic!("{name}: {var}: {e}"));
                        client.vars.set_value("set", var, v).unwrap();
                    }
                    Step::Echo(words) => {
                        let mut line = String::new();
                        for (k, w) in words.iter().enumerate() {
                            if k > 0 {
                                line.push(' ');
                            }
                            match w.strip_prefix(':') {
                                Some(var) => assert!(client.vars.write_text(var, &mut line)),
                                None => line.push_str(w),
                            }
                        }
                        lines.push(line);
                    }
                }
            }
        }
    }

    let recorded =
        std::fs::read_to_string(Path::new(SEQ_DIR).join(format!("{name}.out"))).expect("recording");
    let mut header = recorded.lines();
    assert_eq!(header.next(), Some(format!("# pgbench -n {args}").as_str()));
    let mut stock: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for l in header {
        let id = l.split(' ').next().unwrap().to_string();
        stock.entry(id).or_default().push(l.to_string());
    }
    for (id, lines) in &stock {
        let mine = ours.get(id).map(Vec::as_slice).unwrap_or_default();
        for (k, (s, m)) in lines.iter().zip(mine).enumerate() {
            assert_eq!(s, m, "{name}: client {id}, line {k}");
        }
        assert_eq!(lines.len(), mine.len(), "{name}: client {id}: line count");
    }
    assert_eq!(stock.len(), o.clients, "{name}: every client printed");
    stock.values().map(Vec::len).sum()
}

fn run_all(reader: Reader) {
    let cases = std::fs::read_to_string(Path::new(SEQ_DIR).join("cases.txt")).unwrap();
    let mut lines = 0;
    let mut runs = 0;
    for l in cases
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (name, args) = l.split_once(' ').unwrap();
        lines += run_case(name, args, reader);
        runs += 1;
    }
    assert!(runs >= 10 && lines > 700, "{runs} runs, {lines} lines");
}

#[test]
fn seeded_runs_match_stock_value_for_value() {
    run_all(Reader::Parser);
}

#[test]
fn seeded_runs_match_stock_with_the_test_builder() {
    run_all(Reader::Builder);
}

#[test]
fn clients_are_dealt_to_threads_as_pgbench_does() {
    assert_eq!(thread_of_clients(10, 4), [0, 0, 0, 1, 1, 1, 2, 2, 3, 3]);
    assert_eq!(thread_of_clients(3, 2), [0, 0, 1]);
    assert_eq!(thread_of_clients(2, 5), [0, 1]);
}
