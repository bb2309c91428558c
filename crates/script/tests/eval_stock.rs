//! Every expression of `tests/data/eval/expressions.txt` evaluated as stock pgbench 15
//! did for `\set x debug(EXPR)` (recorded by `scripts/record-stock-eval.sh` into
//! `expected.txt`): the same `debug(...)` lines and the same error message.

mod common;

use common::{clients, parse, stock_lines, RunOptions};

const EXPECTED: &str = include_str!("data/eval/expected.txt");
const EXPRESSIONS: &str = include_str!("data/eval/expressions.txt");

/// Splits the options after ` ;; ` into words, honouring single quotes.
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    let mut any = false;
    for c in s.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                any = true;
            }
            ' ' if !quoted => {
                if any {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            _ => {
                cur.push(c);
                any = true;
            }
        }
    }
    if any {
        out.push(cur);
    }
    out
}

/// `(line, expression, options, stock output lines)` for every recorded expression.
fn cases() -> Vec<(&'static str, &'static str, Vec<String>, Vec<&'static str>)> {
    EXPECTED
        .lines()
        .map(|l| {
            let mut cols = l.split('\t');
            let line = cols.next().unwrap();
            let outputs: Vec<&str> = cols.filter(|c| !c.is_empty()).collect();
            let (expr, opts) = match line.split_once(" ;; ") {
                Some((e, o)) => (e, words(o)),
                None => (line, Vec::new()),
            };
            (line, expr, opts, outputs)
        })
        .collect()
}

#[test]
fn recordings_cover_every_listed_expression() {
    let listed: Vec<&str> = EXPRESSIONS
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let recorded: Vec<&str> = cases().iter().map(|c| c.0).collect();
    assert_eq!(listed, recorded, "re-run scripts/record-stock-eval.sh");
    assert!(recorded.len() > 350);
}

#[test]
fn every_expression_matches_stock() {
    let mut failures = Vec::new();
    for (line, expr, opts, outputs) in cases() {
        let parsed = parse(expr);
        if outputs == ["PARSE-ERROR"] {
            if let Ok(e) = parsed {
                failures.push(format!("{line}: stock rejects it, we built {e:?}"));
            }
            continue;
        }
        let ast = match parsed {
            Ok(ast) => ast,
            Err(e) => {
                failures.push(format!("{line}: cannot build: {e}"));
                continue;
            }
        };
        let o = RunOptions::parse(&opts, 42);
        let (mut cl, _) = clients(&o);
        let got = stock_lines(&ast, &mut cl[0]);
        if got != outputs {
            failures.push(format!("{line}\n   stock: {outputs:?}\n   ours:  {got:?}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
