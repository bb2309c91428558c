//! `--workload=tpcc` beside real HammerDB 4.12 (`../shared/tools/hammerdb/`, a sibling
//! folder of the repository: its Tcl source and `hammerdb.sh build|run`) on one
//! throwaway server of this module's own, with `pg_stat_statements` (`track=all`)
//! loaded: HammerDB's build and `-i --workload=tpcc` at the same warehouses give the
//! same schema (tables, columns, types, keys, indexes, routines) and value
//! distributions (bad credit, customers with an order, the last-name constant), and
//! at 8 virtual users / clients, with all-warehouse off and on, the same nested
//! statements per call of each transaction's routine. Timing-free: what is compared
//! are shares and counts per call. Without HammerDB (or its Tcl): "skipped", a
//! failure under `CI=true`.

use crate::support::{aim, run, skip};
use pgbench_cluster::{Cluster, ClusterOptions};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// HammerDB's folder: `../shared/tools/hammerdb` beside the repository, or
/// `$HAMMERDB_DIR` (a clone elsewhere, a worktree).
fn hammerdb_dir() -> PathBuf {
    match std::env::var_os("HAMMERDB_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/hammerdb"),
    }
}

/// Where `setup.sh` keeps the PostgreSQL library it builds (one for every run).
fn library_cache() -> PathBuf {
    std::env::temp_dir().join("hammerdb-pgtcl")
}

/// HammerDB ready to run, or why not (`setup.sh` installs Debian's Tcl packages and
/// builds its PostgreSQL library; `scripts/test-deps.sh` runs it).
fn hammerdb_ready() -> Result<PathBuf, String> {
    let dir = hammerdb_dir();
    if !dir.join("hammerdb.sh").is_file() {
        return Err(format!(
            "HammerDB is not at {} (the repository's sibling folder shared/tools/hammerdb, \
             or $HAMMERDB_DIR)",
            dir.display()
        ));
    }
    let out = Command::new(dir.join("setup.sh"))
        .env("HAMMERDB_CACHE", library_cache())
        .output()
        .map_err(|e| format!("could not run HammerDB's setup.sh: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "HammerDB's setup.sh failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(dir)
}

/// The cluster: loopback TCP with passwords (HammerDB's connections), the Unix
/// socket trusted (pgbench-rs and psql), pg_stat_statements of nested statements and
/// the calls of PL/pgSQL functions counted.
fn cluster() -> Cluster {
    let cluster = Cluster::start(ClusterOptions {
        tcp: true,
        hba: Some("local all all trust\nhost all all 127.0.0.1/32 scram-sha-256\n".to_string()),
        config: vec![
            (
                "shared_preload_libraries".into(),
                "pg_stat_statements".into(),
            ),
            ("pg_stat_statements.track".into(), "all".into()),
            ("pg_stat_statements.max".into(), "10000".into()),
            ("track_functions".into(), "pl".into()),
            ("autovacuum".into(), "off".into()),
        ],
        ..Default::default()
    })
    .expect("start a cluster with pg_stat_statements and TCP");
    psql(
        &cluster,
        "postgres",
        "alter role postgres password 'postgres'",
    );
    cluster
}

fn psql(cluster: &Cluster, db: &str, sql: &str) -> String {
    cluster
        .psql(db, sql)
        .unwrap_or_else(|e| panic!("psql failed: {e}"))
}

/// `hammerdb.sh build` or `run`, with these `HDB_*` settings.
fn hammerdb(dir: &Path, cluster: &Cluster, mode: &str, settings: &[(&str, &str)]) {
    let work = tempfile::tempdir().unwrap();
    let mut cmd = Command::new(dir.join("hammerdb.sh"));
    cmd.arg(mode)
        .env("PGHOST", "127.0.0.1")
        .env("PGPORT", cluster.port().to_string())
        .env("TMPDIR", work.path())
        .env("HAMMERDB_CACHE", library_cache());
    for (k, v) in settings {
        cmd.env(k, v);
    }
    let out = run(&mut cmd);
    // (An error a transaction meets is printed and the virtual user goes on; one that
    // stops a virtual user is "Error in Virtual User".)
    assert!(
        out.code == 0 && !out.stdout.contains("Error in Virtual User"),
        "hammerdb.sh {mode}: {}\n{}",
        out.stdout,
        out.stderr
    );
    if mode == "run" {
        assert!(
            out.stdout.contains("TEST RESULT : System achieved "),
            "{}",
            out.stdout
        );
    }
}

/// pgbench-rs aimed at `db` on `cluster`.
fn ours(cluster: &Cluster, db: &str) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_pgbench-rs"));
    aim(&mut cmd, cluster, db);
    cmd
}

/// What the schemas must share, as text: columns, constraints, indexes, routines.
const SCHEMA: [&str; 4] = [
    "select table_name, ordinal_position, column_name, data_type, character_maximum_length, \
       numeric_precision, numeric_scale, is_nullable \
     from information_schema.columns where table_schema = 'public' order by 1, 2",
    "select conrelid::regclass, conname, contype, pg_get_constraintdef(oid) from pg_constraint \
     where connamespace = 'public'::regnamespace order by 2",
    "select tablename, indexname, indexdef from pg_indexes where schemaname = 'public' order by 2",
    "select proname, prokind, oidvectortypes(proargtypes), prorettype::regtype, proretset \
     from pg_proc where pronamespace = 'public'::regnamespace order by 1",
];

/// Shares of the load, in percent: bad credit, customers with an order.
fn shares(cluster: &Cluster, db: &str) -> (f64, f64) {
    let v = psql(
        cluster,
        db,
        "select (select count(*) filter (where c_credit = 'BC') * 100.0 / count(*) from customer) \
           || ' ' || (select count(distinct (o_w_id, o_d_id, o_c_id)) * 100.0 \
              / (select count(*) from customer) from orders)",
    );
    let v: Vec<f64> = v.split_whitespace().map(|x| x.parse().unwrap()).collect();
    (v[0], v[1])
}

/// The NURand constant C most likely to have drawn the last names of customers
/// 1001-3000 (TPC-C 4.3.2.3: NURand(255, 0, 999, C)), by maximum likelihood over C.
fn last_name_constant(cluster: &Cluster, db: &str) -> i64 {
    const SYLLABLES: [&str; 10] = [
        "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
    ];
    let mut number_of = BTreeMap::new();
    for n in 0..1000 {
        let name: String = [n / 100, n / 10 % 10, n % 10]
            .iter()
            .map(|&d| SYLLABLES[d])
            .collect();
        number_of.insert(name, n);
    }
    // NURand's distribution before its constant: (A | B) mod 1000, A in 0..=255 and B
    // in 0..=999, every pair alike.
    let mut base = [0u32; 1000];
    for a in 0..=255usize {
        for b in 0..=999usize {
            base[(a | b) % 1000] += 1;
        }
    }
    let counts: Vec<(usize, f64)> = psql(
        cluster,
        db,
        "select c_last, count(*) from customer where c_id > 1000 group by 1",
    )
    .lines()
    .map(|l| {
        let (name, n) = l.split_once('|').unwrap();
        (number_of[name], n.parse().unwrap())
    })
    .collect();
    let likelihood = |c: usize| -> f64 {
        counts
            .iter()
            .map(|&(n, k)| k * f64::from(base[(n + 1000 - c) % 1000]).max(0.5).ln())
            .sum()
    };
    (0..1000)
        .max_by(|&a, &b| likelihood(a).total_cmp(&likelihood(b)))
        .unwrap() as i64
}

/// The five transactions' routines.
const ROUTINES: [&str; 5] = ["neword", "payment", "delivery", "ostat", "slev"];

/// SQL text as tokens: keywords and identifiers in lower case, numbers, string
/// literals, `$n` (pg_stat_statements' constants: "$"), punctuation; no comments.
fn tokens(sql: &str) -> Vec<String> {
    let chars: Vec<char> = sql.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_whitespace() {
            i += 1;
            continue;
        } else if c == '-' && chars.get(i + 1) == Some(&'-') {
            // A comment, to the end of its line.
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
            continue;
        } else if c.is_ascii_alphabetic() || c == '_' {
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
        } else if c.is_ascii_digit() || c == '$' {
            i += 1;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            if c == '$' {
                out.push("$".to_string());
                continue;
            }
        } else if c == '\'' {
            i += 1;
            while i < chars.len() && !(chars[i] == '\'' && chars.get(i + 1) != Some(&'\'')) {
                i += if chars[i] == '\'' { 2 } else { 1 };
            }
            i += 1;
        } else {
            i += 1;
        }
        out.push(
            chars[start..i.min(chars.len())]
                .iter()
                .collect::<String>()
                .to_lowercase(),
        );
    }
    out
}

/// Whether a statement's tokens (as pg_stat_statements shows it: constants as `$n`,
/// PL/pgSQL's `INTO targets` taken out) are written in a routine's source.
fn written_in(statement: &[String], source: &[String]) -> bool {
    let ident = |t: &str| t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    // Where an `INTO a, b, c` starting at each position may end.
    let into_ends = |j: usize| -> Vec<usize> {
        let mut ends = Vec::new();
        let mut k = j + 1;
        while k < source.len() && ident(&source[k]) {
            ends.push(k + 1);
            if source.get(k + 1).map(String::as_str) != Some(",") {
                break;
            }
            k += 2;
        }
        ends
    };
    let (n, m) = (statement.len(), source.len());
    // matched[i][j]: statement[i..] is written from source[j] on.
    let mut matched = vec![vec![false; m + 1]; n + 1];
    matched[n].fill(true);
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            let same = statement[i] == "$" || statement[i] == source[j];
            matched[i][j] = (same && matched[i + 1][j + 1])
                || (source[j] == "into" && into_ends(j).into_iter().any(|k| matched[i][k]));
        }
    }
    (0..m).any(|j| matched[0][j])
}

/// Nested statements per call of each routine in `db` since the last reset: each
/// nested statement pg_stat_statements counted goes to the one routine whose source
/// it is written in.
fn statements_per_call(cluster: &Cluster, db: &str) -> BTreeMap<&'static str, f64> {
    let sources: Vec<(&str, Vec<String>)> = ROUTINES
        .iter()
        .map(|r| {
            let src = psql(
                cluster,
                db,
                &format!("select prosrc from pg_proc where proname = '{r}'"),
            );
            (*r, tokens(&src))
        })
        .collect();
    let mut nested: BTreeMap<&str, f64> = BTreeMap::new();
    let rows = psql(
        cluster,
        db,
        &format!(
            "select calls || chr(1) || regexp_replace(query, '\\s+', ' ', 'g') \
             from pg_stat_statements where not toplevel \
               and dbid = (select oid from pg_database where datname = '{db}')"
        ),
    );
    for row in rows.lines().filter(|l| !l.is_empty()) {
        let (calls, query) = row.split_once('\u{1}').unwrap();
        let statement = tokens(query);
        let mine: Vec<&str> = sources
            .iter()
            .filter(|(_, src)| written_in(&statement, src))
            .map(|(r, _)| *r)
            .collect();
        // DBMS_RANDOM's expression is no statement: only the routines' statements count.
        assert_eq!(mine.len(), 1, "{db}: {query} is in {mine:?}");
        *nested.entry(mine[0]).or_default() += calls.parse::<f64>().unwrap();
    }
    let calls = psql(
        cluster,
        db,
        "select funcname || '|' || calls from pg_stat_user_functions",
    );
    let calls: BTreeMap<&str, f64> = calls
        .lines()
        .filter_map(|l| l.split_once('|'))
        .map(|(f, c)| (f, c.parse().unwrap()))
        .collect();
    ROUTINES
        .iter()
        .map(|r| {
            let n = calls.get(r).copied().unwrap_or(0.0);
            assert!(n > 0.0, "{db}: no calls of {r}");
            (*r, nested.get(r).copied().unwrap_or(0.0) / n)
        })
        .collect()
}

fn reset(cluster: &Cluster, db: &str) {
    psql(
        cluster,
        db,
        "select pg_stat_statements_reset(); select pg_stat_reset()",
    );
}

/// #35's done-when, the functional half: HammerDB's build and ours at 2 warehouses on
/// one server, then runs at 8 virtual users / clients with all-warehouse off and on.
#[test]
fn tpcc_does_hammerdbs_server_side_work() {
    let dir = match hammerdb_ready() {
        Ok(dir) => dir,
        Err(why) => return skip(&why),
    };
    let cluster = cluster();
    hammerdb(
        &dir,
        &cluster,
        "build",
        &[("HDB_WAREHOUSES", "2"), ("HDB_BUILD_VU", "2")],
    );
    psql(&cluster, "postgres", "create database ours");
    let out = run(ours(&cluster, "ours").args(["-i", "--workload=tpcc", "-s", "2", "-j", "2"]));
    assert_eq!(out.code, 0, "{}", out.stderr);
    for db in ["tpcc", "ours"] {
        psql(&cluster, db, "create extension pg_stat_statements");
    }

    for sql in SCHEMA {
        assert_eq!(
            psql(&cluster, "ours", sql),
            psql(&cluster, "tpcc", sql),
            "{sql}"
        );
    }
    let (theirs, mine) = (shares(&cluster, "tpcc"), shares(&cluster, "ours"));
    assert!(
        (theirs.0 - mine.0).abs() <= 2.0 && (theirs.1 - mine.1).abs() <= 2.0,
        "bad credit, customers with an order: HammerDB {theirs:?}, ours {mine:?}"
    );
    assert_eq!(last_name_constant(&cluster, "tpcc"), 123);
    assert_eq!(last_name_constant(&cluster, "ours"), 123);

    for allwarehouse in ["false", "true"] {
        reset(&cluster, "tpcc");
        hammerdb(
            &dir,
            &cluster,
            "run",
            &[
                ("HDB_VU", "8"),
                ("HDB_RAMPUP", "0"),
                ("HDB_DURATION", "1"),
                ("HDB_ALLWAREHOUSE", allwarehouse),
                ("HDB_TIMEPROFILE", "false"),
            ],
        );
        let theirs = statements_per_call(&cluster, "tpcc");
        reset(&cluster, "ours");
        let on = if allwarehouse == "true" { "1" } else { "0" };
        let out = run(ours(&cluster, "ours").args([
            "--workload=tpcc",
            "-c8",
            "-j8",
            "-T20",
            "-D",
            &format!("allwarehouse={on}"),
        ]));
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        let mine = statements_per_call(&cluster, "ours");
        eprintln!(
            "allwarehouse {allwarehouse}: statements per call: ours {mine:?}, HammerDB {theirs:?}"
        );
        for r in ROUTINES {
            let ratio = mine[r] / theirs[r];
            assert!(
                (0.95..=1.05).contains(&ratio),
                "allwarehouse {allwarehouse}: {r}: {} statements per call, HammerDB's {}\n{mine:?}\n{theirs:?}",
                mine[r],
                theirs[r]
            );
        }
        // The new order's 7 and the delivery's 4 exactly; the payment's and the order
        // status's by name (60%) one more than by id.
        assert!(
            (mine["neword"] - 7.0).abs() < 0.01 && (mine["delivery"] - 4.0).abs() < 0.01,
            "{mine:?}"
        );
    }
}

/// The attribution of nested statements to routines: a statement as
/// pg_stat_statements shows it is found where it is written, not where its words are.
#[test]
fn statements_are_found_in_the_routine_that_has_them() {
    let payment = tokens(
        "begin select count(c_last) into half from customer where c_last = last_name \
         and c_d_id = cust_dist; update customer set c_balance = balance - 1 \
         where c_id = cust returning c_balance, ' ' into balance, data; end",
    );
    let ostat = tokens(
        "begin select count(c_id) into wanted from customer where c_last = last_name \
         and c_d_id = dist; end",
    );
    let seen = |q: &str, src: &[String]| written_in(&tokens(q), src);
    let count = "select count(c_id) from customer where c_last = last_name and c_d_id = dist";
    assert!(seen(count, &ostat) && !seen(count, &payment));
    let update =
        "update customer set c_balance = balance - $1 where c_id = cust returning c_balance, $2";
    assert!(seen(update, &payment) && !seen(update, &ostat));
    assert_eq!(
        tokens("x = 'it''s' || $3"),
        ["x", "=", "'it''s'", "|", "|", "$"]
    );
}
