//! Expressions against stock pgbench 15, and the trees the parser builds.
//!
//! `tests/data/parse/expressions/expected.txt` holds what stock printed for the script
//! `\set x debug(EXPR)` (recorded by `scripts/record-stock-parse-errors.sh`): a load
//! error, or the `debug(...)` line, or a run-time error. The same script is parsed here
//! and, when it loads, evaluated with the crate's evaluator: precedence and the
//! compilation of operators show in the values. The tree tests below pin the exact
//! shape `exprparse.y` builds (argument order included, which decides the order of
//! random draws).

use pgbench_script::ast::{CommandKind, Expr, Func, MetaCommand, Value};
use pgbench_script::eval::{evaluate, EvalContext};
use pgbench_script::prng::Prng;
use pgbench_script::variables::Variables;
use pgbench_script::{parse_expression, parse_script};

const EXPECTED: &str = include_str!("data/parse/expressions/expected.txt");

/// What stock printed for `\set x debug(EXPR)`, one line per entry.
fn ours(expr: &str) -> Vec<String> {
    let text = format!("\\set x debug({expr})\n");
    let script = match parse_script("e.sql", "e.sql", &text) {
        Ok(script) => script,
        Err(e) => return e.render("pgbench").lines().map(str::to_string).collect(),
    };
    let CommandKind::Meta(MetaCommand::Set { expr, .. }) = &script.commands[0].kind else {
        panic!("not a \\set: {script:?}");
    };
    // a client as pgbench sets one up for a custom script without -s
    let mut vars = Variables::new();
    vars.set_int("startup", "scale", 1).unwrap();
    vars.set_int("startup", "client_id", 0).unwrap();
    vars.set_int("startup", "default_seed", 5432).unwrap();
    vars.set_int("startup", "random_seed", 42).unwrap();
    let mut rng = Prng::seed(42);
    let mut debug = Vec::new();
    let result = evaluate(
        expr,
        &mut EvalContext {
            vars: &mut vars,
            rng: &mut rng,
            script_index: 0,
            command_index: 1,
            debug_out: &mut debug,
        },
    );
    let mut lines: Vec<String> = String::from_utf8(debug)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    if let Err(e) = result {
        lines.push(format!("pgbench: error: {e}"));
        lines.push("pgbench: error: client 0 aborted in command 0 (set) of script 0; evaluation of meta-command failed".into());
    }
    lines
}

#[test]
fn expressions_match_stock() {
    let mut failures = Vec::new();
    let mut cases = 0;
    for line in EXPECTED.lines() {
        let mut cols = line.split('\t');
        let expr = cols.next().unwrap();
        let stock: Vec<String> = cols.map(str::to_string).collect();
        cases += 1;
        let got = ours(expr);
        if got != stock {
            failures.push(format!("{expr}\n  stock: {stock:?}\n  ours:  {got:?}"));
        }
    }
    assert!(cases >= 90, "only {cases} recorded expressions");
    assert!(
        failures.is_empty(),
        "{} of {cases} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

// ---------------------------------------------------------------------------------------
// Trees

fn parse(text: &str) -> Expr {
    parse_expression(text).unwrap_or_else(|e| panic!("{text}: {}", e.render("pgbench")))
}

fn f(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func { func, args }
}

fn int(i: i64) -> Expr {
    Expr::Const(Value::Int(i))
}

fn var(name: &str) -> Expr {
    Expr::Var(name.to_string())
}

#[test]
fn greater_than_is_less_than_with_operands_swapped() {
    assert_eq!(parse(":a > :b"), f(Func::Lt, vec![var("b"), var("a")]));
    assert_eq!(parse(":a >= :b"), f(Func::Le, vec![var("b"), var("a")]));
    assert_eq!(parse(":a < :b"), f(Func::Lt, vec![var("a"), var("b")]));
    assert_eq!(parse(":a != :b"), parse(":a <> :b"));
}

#[test]
fn unary_operators_compile_to_functions() {
    assert_eq!(parse("-:x"), f(Func::Sub, vec![int(0), var("x")]));
    assert_eq!(parse("+:x"), var("x"));
    assert_eq!(parse("~:x"), f(Func::BitXor, vec![int(-1), var("x")]));
    assert_eq!(parse("NOT :x"), f(Func::Not, vec![var("x")]));
    assert_eq!(parse("-9223372036854775808"), int(i64::MIN));
    assert_eq!(
        parse("- -9223372036854775808"),
        f(Func::Sub, vec![int(0), int(i64::MIN)])
    );
}

#[test]
fn bit_not_binds_looser_than_addition() {
    // ~1+2 is ~(1+2), ~1|2 is (~1)|2
    assert_eq!(
        parse("~1+2"),
        f(
            Func::BitXor,
            vec![int(-1), f(Func::Add, vec![int(1), int(2)])]
        )
    );
    assert_eq!(
        parse("~1|2"),
        f(
            Func::BitOr,
            vec![f(Func::BitXor, vec![int(-1), int(1)]), int(2)]
        )
    );
}

#[test]
fn not_takes_the_comparison() {
    let eq = f(Func::Eq, vec![int(1), int(2)]);
    assert_eq!(parse("NOT 1 = 2"), f(Func::Not, vec![eq.clone()]));
    assert_eq!(
        parse("1 + NOT 1 = 2"),
        f(Func::Add, vec![int(1), f(Func::Not, vec![eq])])
    );
}

#[test]
fn is_forms() {
    let is_null = |x| f(Func::Is, vec![x, Expr::Const(Value::Null)]);
    assert_eq!(parse(":x IS NULL"), is_null(var("x")));
    assert_eq!(parse(":x isnull"), is_null(var("x")));
    assert_eq!(
        parse(":x IS NOT NULL"),
        f(Func::Not, vec![is_null(var("x"))])
    );
    assert_eq!(parse(":x NotNull"), f(Func::Not, vec![is_null(var("x"))]));
    assert_eq!(
        parse(":x IS TRUE"),
        f(Func::Is, vec![var("x"), Expr::Const(Value::Bool(true))])
    );
    assert_eq!(
        parse(":x IS NOT FALSE"),
        f(
            Func::Not,
            vec![f(Func::Is, vec![var("x"), Expr::Const(Value::Bool(false))])]
        )
    );
    // a postfix form yields an operand that binary operators may continue
    assert_eq!(
        parse(":x IS NULL + 1"),
        f(Func::Add, vec![is_null(var("x")), int(1)])
    );
    // comparisons bind tighter: (1 = 2) IS NULL
    assert_eq!(
        parse("1 = 2 ISNULL"),
        is_null(f(Func::Eq, vec![int(1), int(2)]))
    );
}

#[test]
fn seeds_are_appended_to_hash_and_permute() {
    let seed = var("default_seed");
    assert_eq!(
        parse("hash(:v)"),
        f(Func::HashMurmur2, vec![var("v"), seed.clone()])
    );
    assert_eq!(
        parse("Hash_Fnv1a(:v)"),
        f(Func::HashFnv1a, vec![var("v"), seed.clone()])
    );
    assert_eq!(
        parse("hash_murmur2(:v, 7)"),
        f(Func::HashMurmur2, vec![var("v"), int(7)])
    );
    assert_eq!(
        parse("permute(:i, 10)"),
        f(Func::Permute, vec![var("i"), int(10), seed])
    );
    assert_eq!(
        parse("permute(:i, 10, 3)"),
        f(Func::Permute, vec![var("i"), int(10), int(3)])
    );
}

#[test]
fn functions_by_name() {
    assert_eq!(parse("pi()"), f(Func::Pi, vec![]));
    assert_eq!(parse("POWER(2, 3)"), f(Func::Pow, vec![int(2), int(3)]));
    assert_eq!(parse("mod(7, 3)"), parse("7 % 3"));
    assert_eq!(
        parse("greatest(,1, 2)"),
        f(Func::Greatest, vec![int(1), int(2)])
    );
    assert_eq!(
        parse("random_zipfian(1, 10, 1.5)"),
        f(
            Func::RandomZipfian,
            vec![int(1), int(10), Expr::Const(Value::Double(1.5))]
        )
    );
}

#[test]
fn case_gets_a_null_else() {
    assert_eq!(
        parse("CASE WHEN :a THEN 1 WHEN :b THEN 2 END"),
        f(
            Func::Case,
            vec![var("a"), int(1), var("b"), int(2), Expr::Const(Value::Null)]
        )
    );
    assert_eq!(
        parse("case when :a then 1 else 3 end"),
        f(Func::Case, vec![var("a"), int(1), int(3)])
    );
}

#[test]
fn variables_and_keywords() {
    assert_eq!(parse(":1x + :é"), f(Func::Add, vec![var("1x"), var("é")]));
    assert_eq!(
        parse("TrUe AnD nUlL"),
        f(
            Func::And,
            vec![Expr::Const(Value::Bool(true)), Expr::Const(Value::Null)]
        )
    );
    let err = parse_expression("android(1)").unwrap_err();
    assert_eq!(
        err.render("pgbench"),
        "pgbench: error: expr:1: unexpected function name (android)\nandroid(1)\n      ^ error found here\n"
    );
}

#[test]
fn parse_expression_stops_at_the_end_of_the_line() {
    assert_eq!(
        parse("1 + \\\n 2\nignored"),
        f(Func::Add, vec![int(1), int(2)])
    );
    let err = parse_expression("1 < 2 < 3").unwrap_err();
    assert_eq!(
        err.render("x"),
        "x: error: expr:1: syntax error\n1 < 2 < 3\n      ^ error found here\n"
    );
}

/// 1600 random scripts (`data/parse/expressions/fuzz.txt`: expressions, then backslash
/// commands with random arguments): stock's load
/// error, byte for byte, or both accept the script.
#[test]
fn random_scripts_match_stock() {
    const NEWLINE: char = '\u{23ce}';
    let scripts = include_str!("data/parse/expressions/fuzz.txt")
        .lines()
        .filter(|l| !l.starts_with('#'));
    let expected = include_str!("data/parse/expressions/fuzz.expected").lines();
    let mut failures = Vec::new();
    let mut cases = 0;
    for (script, stock) in scripts.zip(expected) {
        cases += 1;
        let text = script.replace(NEWLINE, "\n");
        let ours = match parse_script("e.sql", "e.sql", &text) {
            Ok(_) => "ACCEPTED".to_string(),
            Err(e) => e.render("pgbench").replace('\n', &NEWLINE.to_string()),
        };
        if ours != stock {
            failures.push(format!("{text:?}\n  stock: {stock}\n  ours:  {ours}"));
        }
    }
    assert_eq!(cases, 1600);
    assert!(
        failures.is_empty(),
        "{} of {cases} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
