//! Script parsing benchmarks: the tpcb-like builtin (what every default run parses) and
//! a generated 500-command script mixing `\set` expressions, multi-line SQL with
//! variables, quotes, comments, `\gset` and conditionals.
//!
//! Measured on the shared 2-core development machine (release, `cargo bench -p
//! pgbench-script --bench parse`): tpcb-like 33 us, 500 commands 2.9 ms (about 6 us a
//! command), and up to 53 us / 4.3 ms while other builds loaded the machine. Most of
//! it is pest's per-rule overhead (stack probe, attempt tracking). Scripts are parsed
//! once at start-up, so this matters little; the figures guard against accidental
//! quadratic behaviour.

use criterion::{black_box, criterion_group, criterion_main, Criterion};
use pgbench_script::builtin;
use pgbench_script::parse_script;

/// 500 commands: 100 rounds of five.
fn generated_script() -> String {
    let mut text = String::new();
    for i in 0..100 {
        text.push_str(&format!(
            "\\set v{i} random_gaussian(1, 100000 * :scale, 2.5) + CASE WHEN :client_id > {i} THEN 1 ELSE -1 END\n\
             \\if :client_id % 2 = 0 AND NOT :v{i} IS NULL\n\
             -- round {i}\n\
             UPDATE pgbench_accounts\n   SET abalance = abalance + :v{i}, filler = 'x;{i}'\n WHERE aid = :v{i}::int /* ; */;\n\
             \\endif\n\
             SELECT $q$ :v{i} $q$ AS q \\; SELECT abalance AS a{i} FROM pgbench_accounts WHERE aid = :v{i} \\gset\n"
        ));
    }
    text
}

fn parse(c: &mut Criterion) {
    let tpcb = builtin::find("tpcb-like").expect("builtin");
    c.bench_function("parse tpcb-like", |b| {
        b.iter(|| parse_script(tpcb.name, tpcb.desc, black_box(tpcb.text)).expect("parses"))
    });

    let text = generated_script();
    let script = parse_script("gen.sql", "gen.sql", &text).expect("parses");
    assert_eq!(script.commands.len(), 500);
    c.bench_function("parse 500 commands", |b| {
        b.iter(|| parse_script("gen.sql", "gen.sql", black_box(&text)).expect("parses"))
    });
}

criterion_group!(benches, parse);
criterion_main!(benches);
