//! The conformance vectors of the spec (§6.8), observed from pgbench 15.18: pg_prng's
//! raw output, its doubles, the seed derivation order, and the first values of every
//! distribution for `--random-seed=42`.

use pgbench_script::functions::{
    exponential, gaussian, hash_fnv1a, hash_murmur2, permute, zipfian,
};
use pgbench_script::prng::{choose_script, Prng, SeedError, SeedPlan, SeedSpec};

#[test]
fn raw_output_for_seed_42_and_0() {
    let mut p = Prng::seed(42);
    assert_eq!(
        [p.next_u64(), p.next_u64(), p.next_u64()],
        [
            7631449856891427754,
            4306334408478191133,
            4482733528210176216
        ]
    );
    let mut p = Prng::seed(0);
    assert_eq!(
        [p.next_u64(), p.next_u64()],
        [16053376993090331485, 7868822567099391496]
    );
}

#[test]
fn doubles_for_seed_42() {
    let mut p = Prng::seed(42);
    assert_eq!(
        [p.double(), p.double(), p.double()],
        [
            0.41370172570279373,
            0.23344685605605653,
            0.24300947149795404
        ]
    );
}

#[test]
fn uniform_range_draws_nothing_for_an_empty_span() {
    let mut p = Prng::seed(42);
    assert_eq!(p.uniform_range(5, 5), 5);
    assert_eq!(p.uniform_range(9, 3), 9);
    assert_eq!(p.next_u64(), 7631449856891427754, "no draw was consumed");
    let mut p = Prng::seed(42);
    for _ in 0..1000 {
        let v = p.uniform_range(10, 13);
        assert!((10..=13).contains(&v));
    }
}

#[test]
fn default_seed_is_the_draw_after_the_clients() {
    assert_eq!(
        SeedPlan::new(42, 1, 1, false).default_seed,
        Some(4306334408478191133)
    );
    assert_eq!(
        SeedPlan::new(1, 1, 1, false).default_seed,
        Some(-4077769369618924625)
    );
    assert_eq!(
        SeedPlan::new(7, 2, 2, false).default_seed,
        Some(-6956873347570724869)
    );
    let user = SeedPlan::new(42, 1, 1, true);
    assert_eq!(user.default_seed, None);
    // Without the default_seed draw every thread state moves one draw earlier.
    let mut base = Prng::seed(42);
    base.next_u64();
    assert_eq!(user.threads[0].choose, Prng::seed(base.next_u64()));
    assert_eq!(SeedPlan::new(u64::MAX, 1, 1, false).random_seed, -1);
}

#[test]
fn derivation_order_is_clients_default_seed_then_three_per_thread() {
    let plan = SeedPlan::new(123, 3, 5, false);
    let mut base = Prng::seed(123);
    let clients: Vec<Prng> = (0..3).map(|_| Prng::seed(base.next_u64())).collect();
    assert_eq!(plan.clients, clients);
    assert_eq!(plan.default_seed, Some(base.next_u64() as i64));
    assert_eq!(plan.threads.len(), 3, "-j is capped to -c");
    for t in &plan.threads {
        assert_eq!(t.choose, Prng::seed(base.next_u64()));
        assert_eq!(t.throttle, Prng::seed(base.next_u64()));
        assert_eq!(t.sample, Prng::seed(base.next_u64()));
    }
}

/// `--random-seed=42 -c 1 -j 1`: 5x random(1,100); 3x (gaussian 2.5, exponential 5.0,
/// zipfian 1.07) over [1,1000]; permute(7,1000); hash(7); random(-5,5) > random(-5,5).
#[test]
fn script_of_every_distribution_for_seed_42() {
    let plan = SeedPlan::new(42, 1, 1, false);
    let mut st = plan.clients[0].clone();
    let uniform: Vec<i64> = (0..5).map(|_| st.int_range(1, 100)).collect();
    assert_eq!(uniform, [82, 82, 8, 38, 85]);
    let mut triples = Vec::new();
    for _ in 0..3 {
        triples.push([
            gaussian(&mut st, 1, 1000, 2.5),
            exponential(&mut st, 1, 1000, 5.0),
            zipfian(&mut st, 1, 1000, 1.07),
        ]);
    }
    assert_eq!(triples, [[343, 1, 1], [553, 230, 5], [577, 111, 9]]);
    let seed = plan.default_seed.unwrap();
    assert_eq!(permute(7, 1000, seed), 942);
    assert_eq!(hash_murmur2(7, seed as u64), -7372986303779856053);
    // `a > b` is `b < a`: the right operand draws first.
    let right = st.int_range(-5, 5);
    let left = st.int_range(-5, 5);
    assert!(left <= right, "stock printed false");
}

/// One script line drawing, in order, random(1,10), random_gaussian(1,10,2.5),
/// random_exponential(1,10,3.0) and random_zipfian(1,10,1.5).
#[test]
fn first_values_of_each_function_for_seed_42() {
    let mut st = SeedPlan::new(42, 1, 1, false).clients[0].clone();
    assert_eq!(st.int_range(1, 10), 1);
    assert_eq!(gaussian(&mut st, 1, 10, 2.5), 7);
    assert_eq!(exponential(&mut st, 1, 10, 3.0), 2);
    assert_eq!(zipfian(&mut st, 1, 10, 1.5), 1);
}

#[test]
fn seed_independent_hash_and_permute_values() {
    assert_eq!(hash_murmur2(10, 5432), -5817877081768721676);
    assert_eq!(hash_fnv1a(10, 5432), -7793829335365542153);
    assert_eq!(hash_fnv1a(-1, 0), -8289690350564177859);
    assert_eq!(hash_murmur2(0, 0), 8217090173679840641);
    assert_eq!(permute(0, 4, 5432), 3);
    assert_eq!(permute(-1, 10, 5), 1);
    assert_eq!(permute(3, 1, 99), 0);
    assert_eq!(
        hash_murmur2(
            -1,
            SeedPlan::new(1, 1, 1, false).default_seed.unwrap() as u64
        ),
        -2534676727100739420
    );
}

#[test]
fn permute_is_a_bijection() {
    for size in [1i64, 2, 3, 4, 5, 7, 8, 100, 1000, 1023, 1025] {
        for seed in [0i64, 1, -1, 5432] {
            let mut seen = vec![false; size as usize];
            for v in 0..size {
                let p = permute(v, size, seed);
                assert!((0..size).contains(&p));
                assert!(!seen[p as usize], "size {size} seed {seed}: {p} twice");
                seen[p as usize] = true;
            }
        }
    }
}

/// `--random-seed=7 -c 2 -j 2 -t 4`, scripts s1 = random(1, 1000000), s2 =
/// random(1000001, 2000000), chosen per transaction from each thread's `ts_choose_rs`.
#[test]
fn script_choice_and_values_for_two_threads() {
    let mut plan = SeedPlan::new(7, 2, 2, false);
    let expected = [
        [(0, 869439), (1, 1372040), (1, 1023551), (0, 960650)],
        [(1, 1467069), (0, 571164), (1, 1065272), (0, 79606)],
    ];
    for (client, want) in expected.iter().enumerate() {
        let mut got = Vec::new();
        for _ in 0..4 {
            let script = choose_script(&mut plan.threads[client].choose, &[1, 1]);
            let (lo, hi) = if script == 0 {
                (1, 1_000_000)
            } else {
                (1_000_001, 2_000_000)
            };
            got.push((script, plan.clients[client].int_range(lo, hi)));
        }
        assert_eq!(&got[..], &want[..], "client {client}");
    }
}

#[test]
fn choose_script_draws_nothing_for_one_script() {
    let mut p = Prng::seed(3);
    assert_eq!(choose_script(&mut p, &[5]), 0);
    assert_eq!(p, Prng::seed(3));
}

#[test]
fn poisson_delay_follows_get_poisson_rand() {
    let mut p = Prng::seed(42);
    let u = 1.0 - Prng::seed(42).double();
    assert_eq!(p.poisson(1000.0), (-u.ln() * 1000.0 + 0.5) as i64);
    let mut p = Prng::seed(9);
    let mean = (0..20000).map(|_| p.poisson(100.0)).sum::<i64>() as f64 / 20000.0;
    assert!((95.0..105.0).contains(&mean), "{mean}");
}

#[test]
fn seed_option_values() {
    let parse = |s| SeedSpec::parse(s);
    assert_eq!(parse("42"), Ok(SeedSpec::Value(42)));
    assert_eq!(parse(" 5"), Ok(SeedSpec::Value(5)));
    assert_eq!(parse("-1"), Ok(SeedSpec::Value(u64::MAX)));
    assert_eq!(parse("99999999999999999999"), Ok(SeedSpec::Value(u64::MAX)));
    assert_eq!(parse("time"), Ok(SeedSpec::Time));
    assert_eq!(parse("rand"), Ok(SeedSpec::Rand));
    let err = parse("5 ").unwrap_err();
    assert_eq!(err.to_string(), "unrecognized random seed option \"5 \"");
    assert_eq!(
        err.detail(),
        Some("Expecting an unsigned integer, \"time\" or \"rand\".")
    );
    assert_eq!(parse("Time"), Err(SeedError::Unrecognized("Time".into())));
    assert_eq!(
        SeedError::CouldNotGenerate.to_string(),
        "could not generate random seed"
    );
}
