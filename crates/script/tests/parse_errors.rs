//! Every script of `tests/data/parse/errors/` fails to load exactly as stock pgbench 15
//! failed on it: the same stderr, byte for byte (recorded by
//! `scripts/record-stock-parse-errors.sh`).

use std::fs;
use std::path::Path;

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
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/parse/errors");
    let mut cases = 0;
    let mut failures = Vec::new();
    for entry in fs::read_dir(&dir).expect("errors dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_none_or(|e| e != "sql") {
            continue;
        }
        cases += 1;
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let text = fs::read_to_string(&path).expect("script");
        let args = fs::read_to_string(path.with_extension("args")).unwrap_or_default();
        let expected = fs::read_to_string(path.with_extension("stderr")).expect("recorded stderr");
        match load(&name, &text, &args) {
            Err(e) if e.render("pgbench") == expected => {}
            Err(e) => failures.push(format!(
                "{name}:\n--- stock\n{expected}--- ours\n{}",
                e.render("pgbench")
            )),
            Ok(()) => failures.push(format!("{name}: loads, stock said\n{expected}")),
        }
    }
    assert!(
        cases >= 100,
        "only {cases} cases found in {}",
        dir.display()
    );
    assert!(
        failures.is_empty(),
        "{} of {cases} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
