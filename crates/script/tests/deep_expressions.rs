//! Issue #15 point 4: expressions as long as a line can be never overflow the native
//! stack, whether they are parsed, evaluated, cloned or dropped, and on a thread with a
//! small stack. Flat chains of left-associative and postfix operators are what stock
//! pgbench 15 parses at any length (its bison stack does not grow with them; its
//! recursive evaluator then crashes past some 20,000 terms, where we compute the
//! value); prefix operators, parentheses, calls and CASE nest on bison's stack and fail
//! with stock's "memory exhausted" beyond 10000 states, and within that limit they
//! parse and evaluate here as in stock.

mod common;

use common::{eval_in, Client};
use pgbench_script::ast::{CommandKind, Expr, MetaCommand, Value};
use pgbench_script::error::SyntaxMessage;
use pgbench_script::prng::Prng;
use pgbench_script::variables::Variables;
use pgbench_script::{parse_expression, parse_script};

const TERMS: usize = 200_000;

/// Runs `f` on a thread with a 256 KiB stack (a stack overflow aborts the test binary).
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(256 * 1024)
        .spawn(f)
        .expect("spawn")
        .join()
        .expect("no panic");
}

fn client() -> Client {
    let mut vars = Variables::new();
    vars.set_int("startup", "x", 3).unwrap();
    vars.set_text("startup", "s", "1.5").unwrap();
    Client {
        vars,
        rng: Prng::seed(1),
    }
}

/// `first`, then `times` times `rest`.
fn chain(first: &str, rest: &str, times: usize) -> String {
    let mut text = String::with_capacity(first.len() + rest.len() * times);
    text.push_str(first);
    for _ in 0..times {
        text.push_str(rest);
    }
    text
}

/// Parses `text` as a `\set` of a script, evaluates it, and clones, compares and
/// drops the script, all on a small stack.
fn evaluates_to(text: String, expected: Value) {
    on_small_stack(move || {
        let script = parse_script("c.sql", "c.sql", &format!("\\set y {text}\n"))
            .unwrap_or_else(|e| panic!("{}", e.to_string()));
        let copy = script.clone();
        assert!(copy == script);
        drop(copy);
        let CommandKind::Meta(MetaCommand::Set { expr, .. }) = &script.commands[0].kind else {
            panic!("not a \\set");
        };
        let (value, _) = eval_in(expr, &mut client(), 0, 1);
        assert_eq!(value, Ok(expected));
    });
}

// Each chain has about TERMS operators (parsing one takes seconds in a debug build).

#[test]
/// Issue #15.
fn flat_arithmetic_chain() {
    // each `+3*2/2%4-2` adds 1
    let n = TERMS / 5;
    evaluates_to(chain("1", "+3*2/2%4-2", n), Value::Int(1 + n as i64));
}

#[test]
/// Issue #15.
fn flat_bit_chain() {
    // one round takes 1 to 2, 2 to 3 and 3 to 2
    evaluates_to(
        chain("1", " | 2 & 3 # 1 << 1 >> 1", TERMS / 5),
        Value::Int(3),
    );
}

#[test]
/// Issue #15.
fn flat_logical_and_comparison_chain() {
    evaluates_to(
        chain("1 = 1", " and 1 < 2 or 2 >= 3 and null", TERMS / 5),
        Value::Bool(true),
    );
}

#[test]
/// Issue #15.
fn flat_postfix_chain() {
    evaluates_to(chain("true", " is not null", TERMS), Value::Bool(true));
}

#[test]
/// Issue #15.
fn long_chain_inside_if_0() {
    on_small_stack(|| {
        let text = format!("\\if 0\n\\set x {}\n\\endif\n", chain("1", "+1", TERMS));
        let script = parse_script("c.sql", "c.sql", &text).expect("parses");
        assert_eq!(script.commands.len(), 3);
        let bare = parse_expression(&chain(":x", " notnull", TERMS)).expect("parses");
        drop(bare);
    });
}

/// As deep as bison allows: stock pgbench 15 accepts each of these (one level more
/// fails, see parse_ast.rs), and evaluates them to these values.
#[test]
/// Issue #15.
fn nesting_within_bison_limits_evaluates() {
    let cases = [
        (
            format!("{}1{}", "(".repeat(9996), ")".repeat(9996)),
            Value::Int(1),
        ),
        (format!("{}1", "-".repeat(9996)), Value::Int(1)),
        (format!("{}1", "- ".repeat(9997)), Value::Int(-1)),
        (format!("{}1", "~".repeat(9997)), Value::Int(-2)),
        (format!("{}true", "not ".repeat(9997)), Value::Bool(false)),
        (
            format!("{}-7{}", "abs(".repeat(4998), ")".repeat(4998)),
            Value::Int(7),
        ),
        (
            format!(
                "{}1{}",
                "case when ".repeat(3333),
                " then 2 end".repeat(3333)
            ),
            Value::Int(2),
        ),
        (
            format!("{}1{}", "1 + (".repeat(3332), ")".repeat(3332)),
            Value::Int(3333),
        ),
    ];
    for (text, expected) in cases {
        evaluates_to(text, expected);
    }
}

/// Beyond bison's stack: stock's "memory exhausted", not a crash, however deep.
#[test]
/// Issue #15.
fn nesting_beyond_bison_limits_fails_as_stock() {
    let n = TERMS / 4;
    let cases = [
        format!("{}1{}", "(".repeat(n), ")".repeat(n)),
        format!("{}1", "-".repeat(n)),
        format!("{}1", "~".repeat(n)),
        format!("{}true", "not ".repeat(n)),
        format!("{}1{}", "abs(".repeat(n), ")".repeat(n)),
        format!("{}1", "1 + (".repeat(n)),
        // a line of 2 MB
        format!("{}1{}", "(".repeat(TERMS * 5), ")".repeat(TERMS * 5)),
    ];
    for text in cases {
        on_small_stack(move || {
            let err = parse_expression(&text).expect_err("too deep");
            assert_eq!(
                err.as_syntax().map(|s| s.message),
                Some(SyntaxMessage::MemoryExhausted),
                "{}",
                &text[..20]
            );
        });
    }
}

/// Trees built by hand, deeper than anything the recursion takes, evaluate with every
/// rule intact: laziness, NULL propagation, `debug()`, errors.
#[test]
/// Issue #15.
fn deep_hand_built_trees_keep_the_rules() {
    use common::{call, int, var};
    use pgbench_script::ast::Func;
    on_small_stack(|| {
        let mut e = int(0);
        for i in 0..TERMS as i64 {
            e = call(Func::Add, [e, int(i % 3)]);
        }
        // the first operand of AND is deep; the second draws a random number only if
        // evaluated
        let guarded = |first: Expr| {
            call(
                Func::And,
                [
                    first,
                    call(Func::Eq, [call(Func::Random, [int(1), int(9)]), int(0)]),
                ],
            )
        };
        let mut c = client();
        let sum = call(Func::Lt, [e.clone(), int(0)]);
        assert_eq!(
            eval_in(&guarded(sum), &mut c, 0, 1).0,
            Ok(Value::Bool(false))
        );
        assert_eq!(c.rng, Prng::seed(1), "AND evaluated its second operand");
        let debugged = call(Func::Debug, [e.clone()]);
        let (v, out) = eval_in(&debugged, &mut c, 2, 5);
        assert_eq!(v, Ok(Value::Int(199_999)));
        assert_eq!(out, "debug(script=2,command=5): int 199999\n");
        let with_null = call(Func::Add, [e.clone(), Expr::Const(Value::Null)]);
        assert_eq!(eval_in(&with_null, &mut c, 0, 1).0, Ok(Value::Null));
        let undefined = call(Func::Add, [e, var("nope")]);
        assert_eq!(
            eval_in(&undefined, &mut c, 0, 1)
                .0
                .map_err(|e| e.to_string()),
            Err("undefined variable \"nope\"".to_string())
        );
    });
}
