//! Evaluator micro-benchmarks on the benchmark's hot path: the four `\set` commands of
//! the index-inserts-only workload (evaluated and stored), `random(1, 100000 *
//! :scale)`, `hash(:aid)`, a `CASE`, other distributions, double arithmetic, and
//! substituting variables into SQL text.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pgbench_script::ast::{CommandKind, Expr, MetaCommand};
use pgbench_script::eval::{evaluate, EvalContext};
use pgbench_script::parser::{parse_expression, parse_script};
use pgbench_script::prng::{Prng, SeedPlan};
use pgbench_script::variables::Variables;

/// The four `\set` commands of the repository's `examples/index-inserts-only.sql`
/// (the workload of the README's first run and of `benches/compare.sh`).
const INDEX_INSERTS_ONLY: &str = "\\set aid random(1, 1000000000)
\\set bid random(1, 1000000000)
\\set tid random(1, 1000000000)
\\set delta random(-500000000, 500000000)
BEGIN;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
";

fn expr(text: &str) -> Expr {
    parse_expression(text).expect("valid expression")
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
    let script = parse_script(
        "index-inserts-only.sql",
        "index-inserts-only.sql",
        INDEX_INSERTS_ONLY,
    )
    .expect("valid script");
    let sets: Vec<(String, Expr)> = script
        .commands
        .iter()
        .filter_map(|c| match &c.kind {
            CommandKind::Meta(MetaCommand::Set { var, expr }) => Some((var.clone(), expr.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(sets.len(), 4);
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
        &expr("random(1, 100000 * :scale)"),
    );
    bench_single(c, "hash_aid", &expr("hash(:aid)"));
    bench_single(
        c,
        "case_when",
        &expr("CASE WHEN :aid < 1000 THEN 1 WHEN :aid % 2 = 0 THEN 2 ELSE 3 END"),
    );
    bench_single(
        c,
        "random_gaussian",
        &expr("random_gaussian(1, 1000000, 2.5)"),
    );
    bench_single(
        c,
        "random_zipfian",
        &expr("random_zipfian(1, 1000000, 1.07)"),
    );
    bench_single(
        c,
        "double_arithmetic",
        &expr("sqrt(:aid) * 2.5 + ln(:scale) / pi()"),
    );
}

criterion_group!(eval, benches);
criterion_main!(eval);
