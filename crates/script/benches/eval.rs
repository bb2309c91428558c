//! Evaluator micro-benchmarks on the benchmark's hot path: the four `\set` commands of
//! the index-inserts-only workload (evaluated and stored), `random(1, 100000 *
//! :scale)`, `hash(:aid)`, a `CASE`, and substituting variables into SQL text.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pgbench_script::ast::{Expr, Func, Value};
use pgbench_script::eval::{evaluate, EvalContext};
use pgbench_script::prng::{Prng, SeedPlan};
use pgbench_script::variables::Variables;

fn call(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func { func, args }
}

fn int(i: i64) -> Expr {
    Expr::Const(Value::Int(i))
}

fn var(name: &str) -> Expr {
    Expr::Var(name.to_string())
}

/// A client as pgbench sets it up for `--random-seed=42 -s 25000`.
fn client() -> (Variables, Prng) {
    let plan = SeedPlan::new(42, 1, 1, false);
    let mut vars = Variables::new();
    vars.set_int("startup", "scale", 25000).unwrap();
    vars.set_int("startup", "client_id", 0).unwrap();
    vars.set_int("startup", "default_seed", plan.default_seed.unwrap())
        .unwrap();
    vars.set_int("startup", "random_seed", plan.random_seed)
        .unwrap();
    vars.set_int("set", "aid", 1).unwrap();
    (vars, plan.clients[0].clone())
}

fn bench_single(c: &mut Criterion, name: &str, expr: &Expr) {
    let (mut vars, mut rng) = client();
    let mut sink = std::io::sink();
    c.bench_function(name, |b| {
        b.iter(|| {
            let mut ctx = EvalContext {
                vars: &mut vars,
                rng: &mut rng,
                script_index: 0,
                command_index: 1,
                debug_out: &mut sink,
            };
            black_box(evaluate(black_box(expr), &mut ctx).unwrap())
        })
    });
}

fn benches(c: &mut Criterion) {
    // /work/shared/reference/index-inserts-only.sql
    let sets = [
        ("aid", call(Func::Random, vec![int(1), int(1_000_000_000)])),
        ("bid", call(Func::Random, vec![int(1), int(1_000_000_000)])),
        ("tid", call(Func::Random, vec![int(1), int(1_000_000_000)])),
        (
            "delta",
            call(Func::Random, vec![int(-500_000_000), int(500_000_000)]),
        ),
    ];
    let (mut vars, mut rng) = client();
    let mut sink = std::io::sink();
    c.bench_function("index_inserts_only_4_sets", |b| {
        b.iter(|| {
            for (name, expr) in &sets {
                let mut ctx = EvalContext {
                    vars: &mut vars,
                    rng: &mut rng,
                    script_index: 0,
                    command_index: 1,
                    debug_out: &mut sink,
                };
                let v = evaluate(expr, &mut ctx).unwrap();
                vars.set_value("set", name, v).unwrap();
            }
        })
    });

    let mut sql = String::with_capacity(256);
    c.bench_function("index_inserts_only_substitute", |b| {
        b.iter(|| {
            sql.clear();
            sql.push_str("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (");
            for name in ["tid", "bid", "aid", "delta"] {
                vars.write_text(name, &mut sql);
                sql.push_str(", ");
            }
            sql.push_str("CURRENT_TIMESTAMP);");
            black_box(sql.len())
        })
    });

    bench_single(
        c,
        "random_1_100000_scale",
        &call(
            Func::Random,
            vec![int(1), call(Func::Mul, vec![int(100_000), var("scale")])],
        ),
    );
    bench_single(
        c,
        "hash_aid",
        &call(Func::HashMurmur2, vec![var("aid"), var("default_seed")]),
    );
    bench_single(
        c,
        "case_when",
        &call(
            Func::Case,
            vec![
                call(Func::Lt, vec![var("aid"), int(1000)]),
                int(1),
                call(
                    Func::Eq,
                    vec![call(Func::Mod, vec![var("aid"), int(2)]), int(0)],
                ),
                int(2),
                int(3),
            ],
        ),
    );
    bench_single(
        c,
        "random_gaussian",
        &call(
            Func::RandomGaussian,
            vec![int(1), int(1_000_000), Expr::Const(Value::Double(2.5))],
        ),
    );
    bench_single(
        c,
        "random_zipfian",
        &call(
            Func::RandomZipfian,
            vec![int(1), int(1_000_000), Expr::Const(Value::Double(1.07))],
        ),
    );
}

criterion_group!(eval, benches);
criterion_main!(eval);
