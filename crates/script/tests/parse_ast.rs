//! What the parser builds for each kind of command: SQL text and pieces, result
//! targets, `\sleep` units, shell arguments, line numbers and `first_line`. The
//! behaviours were checked against stock pgbench 15 (`--debug`, `-r`); the recorded
//! comparisons are in `parse_framing.rs` and `parse_errors.rs`.

use pgbench_script::ast::{
    Command, CommandKind, MetaCommand, ResultTarget, ShellArg, SleepArg, SqlCommand, SqlPiece,
};
use pgbench_script::error::{ConditionMessage, SyntaxMessage};
use pgbench_script::parser::check_parameter_count;
use pgbench_script::{parse_script, ScriptError};

fn commands(text: &str) -> Vec<Command> {
    parse_script("t.sql", "t.sql", text)
        .unwrap_or_else(|e| panic!("{}", e.render("pgbench")))
        .commands
}

fn sql(command: &Command) -> &SqlCommand {
    match &command.kind {
        CommandKind::Sql(sql) => sql,
        CommandKind::Meta(m) => panic!("not SQL: {m:?}"),
    }
}

fn meta(command: &Command) -> &MetaCommand {
    match &command.kind {
        CommandKind::Meta(m) => m,
        CommandKind::Sql(s) => panic!("not a meta-command: {s:?}"),
    }
}

fn sleep(text: &str) -> (SleepArg, i64) {
    match meta(&commands(text)[0]) {
        MetaCommand::Sleep { duration, unit_us } => (duration.clone(), *unit_us),
        other => panic!("{other:?}"),
    }
}

#[test]
fn sleep_units() {
    assert_eq!(sleep("\\sleep 3"), (SleepArg::Const(3), 1_000_000));
    assert_eq!(sleep("\\sleep 10ms"), (SleepArg::Const(10), 1_000));
    assert_eq!(sleep("\\sleep 10 MS"), (SleepArg::Const(10), 1_000));
    assert_eq!(sleep("\\sleep +5us"), (SleepArg::Const(5), 1));
    assert_eq!(sleep("\\sleep -2 s"), (SleepArg::Const(-2), 1_000_000));
    assert_eq!(sleep("\\sleep :d uS"), (SleepArg::Var("d".into()), 1));
    // atoi("-") is 0, and pgbench accepts the sign alone
    assert_eq!(sleep("\\sleep - ms"), (SleepArg::Const(0), 1_000));
    // atoi truncates to a C int
    assert_eq!(sleep("\\sleep 4294967297"), (SleepArg::Const(1), 1_000_000));
}

#[test]
fn shell_arguments() {
    let cmds = commands("\\setshell v echo :x ::y z\n\\shell touch :f\n");
    assert_eq!(
        meta(&cmds[0]),
        &MetaCommand::SetShell {
            var: "v".into(),
            command: "echo".into(),
            args: vec![
                ShellArg::Var("x".into()),
                ShellArg::Literal(":y".into()),
                ShellArg::Literal("z".into())
            ],
        }
    );
    assert_eq!(
        meta(&cmds[1]),
        &MetaCommand::Shell {
            command: "touch".into(),
            args: vec![ShellArg::Var("f".into())],
        }
    );
}

#[test]
fn gset_and_aset_merge_into_the_previous_sql_command() {
    let cmds =
        commands("SELECT 1 AS a\n\n-- c\n\\gset\nSELECT 2 AS b \\aset p_\nSELECT 3;\n\\GSET q\n");
    assert_eq!(cmds.len(), 3);
    assert_eq!(
        sql(&cmds[0]).target,
        ResultTarget::Gset {
            prefix: String::new()
        }
    );
    assert_eq!(sql(&cmds[0]).text, "SELECT 1 AS a\n\n-- c\n");
    assert_eq!(
        sql(&cmds[1]).target,
        ResultTarget::Aset {
            prefix: "p_".into()
        }
    );
    assert_eq!(sql(&cmds[1]).text, "SELECT 2 AS b ");
    assert_eq!(
        sql(&cmds[2]).target,
        ResultTarget::Gset { prefix: "q".into() }
    );
}

#[test]
fn gset_does_not_count_as_a_command_in_condition_errors() {
    let err = parse_script("t.sql", "t.sql", "SELECT 1 \\gset\n\\endif\n").unwrap_err();
    assert_eq!(
        err,
        ScriptError::Condition {
            script: "t.sql".into(),
            command: 2,
            message: ConditionMessage::EndifWithoutIf,
        }
    );
}

#[test]
fn line_numbers_and_first_lines() {
    let cmds = commands("-- header\n\n  SELECT 1\r\n  , 2;\n\\set x \\\n  1\n\\ sleep 0\nSELECT 3");
    let lines: Vec<_> = cmds
        .iter()
        .map(|c| (c.line, c.first_line.as_str()))
        .collect();
    assert_eq!(
        lines,
        [
            (3, "SELECT 1"),
            (5, "\\set x \\\n  1"),
            (7, "\\ sleep 0"),
            (8, "SELECT 3")
        ]
    );
}

#[test]
fn first_line_is_cut_at_127_bytes_on_a_character_boundary() {
    let long = format!("SELECT '{}';", "a".repeat(200));
    assert_eq!(commands(&long)[0].first_line, long[..127]);
    // 126 ASCII bytes then a two-byte character: pgbench would cut it in half
    let text = format!("SELECT '{}é';", "b".repeat(118));
    assert_eq!(commands(&text)[0].first_line.len(), 126);
}

#[test]
fn pieces_split_at_variables() {
    let cmds = commands("SELECT :a::int, ':b', x:::c, :1, :d_1é;");
    let t = |s: &str| SqlPiece::Text(s.into());
    let v = |s: &str| SqlPiece::Var(s.into());
    assert_eq!(
        sql(&cmds[0]).pieces,
        [
            t("SELECT "),
            v("a"),
            t("::int, '"),
            v("b"),
            t("', x:::c, :1, "),
            v("d_1é"),
            t(";")
        ]
    );
    assert_eq!(
        sql(&cmds[0]).parameterized_text(),
        "SELECT $1::int, '$2', x:::c, :1, $3;"
    );
}

#[test]
fn parameter_limit() {
    let ok = commands(&format!("SELECT {};", vec![":x"; 255].join(",")));
    assert!(check_parameter_count(sql(&ok[0])).is_ok());
    let text = format!("SELECT {};", vec![":x"; 256].join(","));
    let too_many = commands(&text);
    assert_eq!(
        check_parameter_count(sql(&too_many[0]))
            .unwrap_err()
            .to_string(),
        format!("statement has too many arguments (maximum is 255): {text}")
    );
}

#[test]
fn script_ends_at_a_nul_byte() {
    let cmds = commands("SELECT 1;\0\\foo\n");
    assert_eq!(cmds.len(), 1);
}

#[test]
fn pipeline_commands() {
    // \syncpipeline is pgbench 17's; pgbench 15 rejects it as an invalid command
    let cmds = commands("\\startpipeline\nSELECT 1;\n\\syncpipeline\n\\endpipeline\n");
    assert_eq!(meta(&cmds[0]), &MetaCommand::StartPipeline);
    assert_eq!(meta(&cmds[2]), &MetaCommand::SyncPipeline);
    assert_eq!(meta(&cmds[3]), &MetaCommand::EndPipeline);
    let err = parse_script("t.sql", "t.sql", "\\syncpipeline now\n").unwrap_err();
    assert_eq!(
        err.as_syntax().map(|s| s.message),
        Some(SyntaxMessage::UnexpectedArgument)
    );
}

#[test]
fn set_takes_any_word_as_the_variable() {
    // names are checked when the command runs, not when it is parsed
    let cmds = commands("\\set 1x-y 1\n");
    assert!(matches!(meta(&cmds[0]), MetaCommand::Set { var, .. } if var == "1x-y"));
}

#[test]
fn messages_name_the_command_as_written() {
    let err = parse_script("t.sql", "t.sql", "SELECT 1;\n\\SLEEP\n").unwrap_err();
    assert_eq!(
        err.render("pgbench"),
        "pgbench: error: t.sql:2: missing argument in command \"SLEEP\"\n\\SLEEP\n"
    );
}

#[test]
fn deep_expressions_within_bison_limits_parse() {
    // stock pgbench 15 accepts all of these (one short of "memory exhausted"); the
    // recorded failures one level deeper are in tests/data/parse/errors/deep-*.sql
    let cases = [
        format!("\\set x {}1{}\n", "(".repeat(9996), ")".repeat(9996)),
        format!("\\set x {}1\n", "-".repeat(9997)),
        format!("\\set x {}true\n", "not ".repeat(9997)),
        format!("\\set x {}1{}\n", "abs(".repeat(4998), ")".repeat(4998)),
        format!(
            "\\set x {}1{}\n",
            "case when ".repeat(3333),
            " then 1 end".repeat(3333)
        ),
    ];
    for text in cases {
        let script = parse_script("d.sql", "d.sql", &text);
        assert!(
            script.is_ok(),
            "{}",
            script
                .unwrap_err()
                .render("pgbench")
                .lines()
                .next()
                .unwrap_or("")
        );
    }
    // one level deeper, bison's stack fills at the first `)`; far deeper, at the 9999th `(`
    for (depth, column) in [(9997, 10005), (50_000, 10005)] {
        let text = format!("\\set x {}1{}\n", "(".repeat(depth), ")".repeat(depth));
        let err = parse_script("d.sql", "d.sql", &text).unwrap_err();
        assert_eq!(
            err.as_syntax().map(|s| (s.message, s.column)),
            Some((SyntaxMessage::MemoryExhausted, Some(column))),
            "{depth}"
        );
    }
}

#[test]
fn caret_beyond_any_format_width() {
    // 3333 nested `case when 1 then 2 else` overflow bison's stack at column 79985
    // (stock pgbench 15 printed a caret line of 80003 bytes for this script)
    let text = format!(
        "\\set x {}1{}\n",
        "case when 1 then 2 else ".repeat(3333),
        " end".repeat(3333)
    );
    let rendered = parse_script("c.sql", "c.sql", &text)
        .unwrap_err()
        .render("pgbench");
    let caret = rendered.lines().nth(2).expect("caret line");
    assert_eq!(caret.len(), 80003);
    assert_eq!(caret.trim_start(), "^ error found here");
}
