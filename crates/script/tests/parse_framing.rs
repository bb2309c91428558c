//! SQL framing against stock pgbench 15: for every script of
//! `tests/data/parse/framing/`, the SQL text stock sent (from `--debug`) and the
//! command list of its `-r` report (each command's `first_line`) were recorded by
//! `scripts/record-stock-parse-errors.sh`; the parsed script must give the same.

use std::collections::HashMap;

use pgbench_script::ast::{CommandKind, Expr, MetaCommand, Script, SqlPiece, Value};
use pgbench_script::parse_script;

mod recorded;

/// The options of a case's `.args` file that change what is sent.
struct Options {
    extended: bool,
    defines: HashMap<String, String>,
}

fn options(args: &str) -> Options {
    let words: Vec<&str> = args.split_whitespace().collect();
    let mut opts = Options {
        extended: false,
        defines: HashMap::new(),
    };
    for pair in words.windows(2) {
        match pair {
            ["-M", mode] => opts.extended = *mode != "simple",
            ["-D", def] => {
                let (name, value) = def.split_once('=').expect("-D NAME=VALUE");
                opts.defines.insert(name.to_string(), value.to_string());
            }
            _ => {}
        }
    }
    opts
}

/// The framing cases use constant conditions only.
fn constant_truth(expr: &Expr) -> bool {
    match expr {
        Expr::Const(Value::Int(i)) => *i != 0,
        Expr::Const(Value::Bool(b)) => *b,
        other => panic!("framing cases need constant conditions, not {other:?}"),
    }
}

/// The SQL one transaction sends, as `sending <text>` entries, following `\if`.
fn sent(script: &Script, opts: &Options) -> Vec<String> {
    // per open \if: (this branch runs, some branch already ran)
    let mut branches: Vec<(bool, bool)> = Vec::new();
    let running = |b: &[(bool, bool)]| b.iter().all(|&(run, _)| run);
    let mut out = Vec::new();
    for command in &script.commands {
        match &command.kind {
            CommandKind::Meta(MetaCommand::If(e)) => {
                let t = running(&branches) && constant_truth(e);
                branches.push((t, t));
            }
            CommandKind::Meta(MetaCommand::Elif(e)) => {
                let (_, done) = branches.pop().expect("\\elif inside \\if");
                let t = !done && constant_truth(e);
                branches.push((t, done || t));
            }
            CommandKind::Meta(MetaCommand::Else) => {
                let (_, done) = branches.pop().expect("\\else inside \\if");
                branches.push((!done, true));
            }
            CommandKind::Meta(MetaCommand::Endif) => {
                branches.pop();
            }
            CommandKind::Sql(sql) if running(&branches) => {
                let text = if opts.extended {
                    sql.parameterized_text()
                } else {
                    sql.pieces
                        .iter()
                        .map(|p| match p {
                            SqlPiece::Text(t) => t.clone(),
                            SqlPiece::Var(name) => opts
                                .defines
                                .get(name)
                                .cloned()
                                .unwrap_or(format!(":{name}")),
                        })
                        .collect()
                };
                // pgbench's logger drops one trailing newline of a message
                let text = text.strip_suffix('\n').unwrap_or(&text);
                out.push(format!("sending {text}"));
            }
            _ => {}
        }
    }
    out
}

/// Splits a `.stock` file into its `sending` entries (which may span lines) and the
/// lines after `report`.
fn recording(stock: &str) -> (Vec<String>, String) {
    let (sending, report) = stock.split_once("report\n").expect("report marker");
    let mut entries: Vec<String> = Vec::new();
    // split on '\n' only: a '\r' in the SQL is part of what was sent
    for line in sending.split_terminator('\n') {
        if line.starts_with("sending ") {
            entries.push(line.to_string());
        } else {
            let last = entries.last_mut().expect("continuation of a sending entry");
            last.push('\n');
            last.push_str(line);
        }
    }
    (entries, report.to_string())
}

#[test]
fn framing_matches_stock() {
    let cases = recorded::cases("framing", 30);
    let mut failures = Vec::new();
    for case in &cases {
        let name = &case.name;
        let opts = options(&case.companion("args").unwrap_or_default());
        let (stock_sent, stock_report) = recording(&case.companion("stock").expect("recording"));
        let script = match parse_script(name, name, &case.text) {
            Ok(s) => s,
            Err(e) => {
                failures.push(format!("{name}: {}", e.render("pgbench")));
                continue;
            }
        };
        let ours = sent(&script, &opts);
        let report: String = script
            .commands
            .iter()
            .map(|c| format!("- {}\n", c.first_line))
            .collect();
        if stock_report.is_empty() {
            // the server rejected a command and stock aborted: what it sent up to there
            if stock_sent.len() > ours.len() || ours[..stock_sent.len()] != stock_sent[..] {
                failures.push(format!(
                    "{name}: sent\n{ours:#?}\nstock (aborted) sent\n{stock_sent:#?}"
                ));
            }
            continue;
        }
        if ours != stock_sent {
            failures.push(format!(
                "{name}: sent\n{ours:#?}\nstock sent\n{stock_sent:#?}"
            ));
        }
        if report != stock_report {
            failures.push(format!(
                "{name}: report\n{report}stock report\n{stock_report}"
            ));
        }
    }
    recorded::assert_no_failures(cases.len(), &failures);
}

/// 600 random scripts (`data/parse/framing/fuzz.txt`) whose SQL pieces sit in an
/// `\if 0` block: stock's load error, byte for byte, or its `-r` command list.
#[test]
fn random_scripts_match_stock() {
    const NEWLINE: char = '\u{23ce}';
    const FIELDS: char = '\u{241f}';
    let scripts = include_str!("data/parse/framing/fuzz.txt")
        .lines()
        .filter(|l| !l.starts_with('#'));
    let expected = include_str!("data/parse/framing/fuzz.expected").lines();
    let mut failures = Vec::new();
    let mut cases = 0;
    for (script, stock) in scripts.zip(expected) {
        cases += 1;
        let text = script.replace(NEWLINE, "\n");
        let (stock_err, stock_report) = stock.split_once(FIELDS).expect("two fields");
        let (err, report) = match parse_script("f.sql", "f.sql", &text) {
            Ok(script) => (
                String::new(),
                script
                    .commands
                    .iter()
                    .map(|c| format!("- {}\n", c.first_line))
                    .collect(),
            ),
            Err(e) => (e.render("pgbench"), String::new()),
        };
        let nl = NEWLINE.to_string();
        if (err.replace('\n', &nl), report.replace('\n', &nl))
            != (stock_err.to_string(), stock_report.to_string())
        {
            failures.push(format!(
                "{text:?}\n  stock: {stock}\n  ours:  {err}{report}"
            ));
        }
    }
    assert_eq!(cases, 600);
    assert!(
        failures.is_empty(),
        "{} of {cases} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
