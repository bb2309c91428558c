//! Every script of `tests/data/parse/errors/` fails to load exactly as stock pgbench 15
//! failed on it: the same stderr, byte for byte (recorded by
//! `scripts/record-stock-parse-errors.sh`).

mod recorded;

use pgbench_script::ast::CommandKind;
use pgbench_script::parser::check_parameter_count;
use pgbench_script::{parse_script, ScriptError};

/// What loading `name` does, as pgbench would report it: the parse, then (in extended or
/// prepared mode) the parameter count check pgbench makes on every SQL command.
fn load(name: &str, text: &str, args: &str) -> Result<(), ScriptError> {
    let script = parse_script(name, name, text)?;
    if args.contains("-M extended") || args.contains("-M prepared") {
        for command in &script.commands {
            if let CommandKind::Sql(sql) = &command.kind {
                check_parameter_count(sql)?;
            }
        }
    }
    Ok(())
}

#[test]
fn load_errors_match_stock() {
    let cases = recorded::cases("errors", 100);
    let mut failures = Vec::new();
    for case in &cases {
        let name = &case.name;
        let args = case.companion("args").unwrap_or_default();
        let expected = case.companion("stderr").expect("recorded stderr");
        match load(name, &case.text, &args) {
            Err(e) if e.render("pgbench") == expected => {}
            Err(e) => failures.push(format!(
                "{name}:\n--- stock\n{expected}--- ours\n{}",
                e.render("pgbench")
            )),
            Ok(()) => failures.push(format!("{name}: loads, stock said\n{expected}")),
        }
    }
    recorded::assert_no_failures(cases.len(), &failures);
}
