//! The builtin scripts against stock pgbench 15: `-b list`, `--show-script=NAME` and
//! failed `-b` lookups print what stock printed (recorded by
//! `scripts/record-stock-parse-errors.sh`), and every builtin parses into its commands.

use pgbench_script::ast::{CommandKind, MetaCommand, SqlPiece};
use pgbench_script::builtin::{self, BUILTINS};

#[test]
fn list_matches_stock() {
    assert_eq!(
        builtin::list_text(),
        include_str!("data/parse/builtins/list.stderr")
    );
}

#[test]
fn show_script_matches_stock() {
    let recorded = [
        (
            "tpcb-like",
            include_str!("data/parse/builtins/show-tpcb-like.stderr"),
        ),
        (
            "simple-update",
            include_str!("data/parse/builtins/show-simple-update.stderr"),
        ),
        (
            "select-only",
            include_str!("data/parse/builtins/show-select-only.stderr"),
        ),
    ];
    for (name, stock) in recorded {
        let b = builtin::find(name).expect("builtin");
        assert_eq!(builtin::show_script_text(b), stock, "{name}");
    }
}

#[test]
fn failed_lookups_match_stock() {
    let recorded = [
        ("s", include_str!("data/parse/builtins/find-s.stderr")),
        ("xyz", include_str!("data/parse/builtins/find-xyz.stderr")),
        ("", include_str!("data/parse/builtins/find-empty.stderr")),
        (
            "list-",
            include_str!("data/parse/builtins/find-list-.stderr"),
        ),
    ];
    for (prefix, stock) in recorded {
        let err = builtin::find(prefix).expect_err(prefix);
        assert_eq!(err.render("pgbench"), stock, "prefix {prefix:?}");
    }
}

#[test]
fn unambiguous_prefixes_find_their_builtin() {
    assert_eq!(builtin::find("t").unwrap().name, "tpcb-like");
    assert_eq!(builtin::find("si").unwrap().name, "simple-update");
    assert_eq!(builtin::find("se").unwrap().name, "select-only");
    assert_eq!(
        builtin::find("select-only").unwrap().desc,
        "<builtin: select only>"
    );
    // prefix match only: a longer name is no match
    assert!(builtin::find("select-only-x").is_err());
}

#[test]
fn builtins_parse() {
    let counts = [
        ("tpcb-like", 4, 7),
        ("simple-update", 4, 5),
        ("select-only", 1, 1),
    ];
    for (b, (name, sets, sqls)) in BUILTINS.iter().zip(counts) {
        let script = b.script();
        assert_eq!((script.name.as_str(), script.desc.as_str()), (name, b.desc));
        let set = script
            .commands
            .iter()
            .filter(|c| matches!(c.kind, CommandKind::Meta(MetaCommand::Set { .. })))
            .count();
        let sql: Vec<_> = script
            .commands
            .iter()
            .filter_map(|c| match &c.kind {
                CommandKind::Sql(sql) => Some(sql),
                CommandKind::Meta(_) => None,
            })
            .collect();
        assert_eq!((set, sql.len()), (sets, sqls), "{name}");
        assert_eq!(script.commands.len(), sets + sqls);
    }
    let tpcb = BUILTINS[0].script();
    let CommandKind::Sql(update) = &tpcb.commands[5].kind else {
        panic!()
    };
    assert_eq!(
        update.parameterized_text(),
        "UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;"
    );
    assert_eq!(update.parameters().collect::<Vec<_>>(), ["delta", "aid"]);
    assert_eq!(update.pieces[1], SqlPiece::Var("delta".into()));
    assert_eq!(tpcb.commands[5].line, 6);
}
