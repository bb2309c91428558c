//! The script parser: pgbench's `ParseScript()`. It turns a script's text into
//! [`ast::Command`]s, with the load-time checks and messages of pgbench 15.
//!
//! SQL framing (where a command ends) is the psql lexer's job (`sql`); backslash
//! commands (`meta`) and expressions (`expr`) follow pgbench's own lexer and bison
//! grammar, written in pest (`script.pest`). What this module owns is the loop that
//! alternates between them, `\gset`/`\aset` merging, and the checks made once the whole
//! script is read (empty script, `\if` nesting).

mod expr;
mod grammar;
mod meta;
mod sql;
mod sql_tokens;

use crate::ast::{self, Command, CommandKind, MetaCommand, ResultTarget, Script, SqlCommand};
use crate::error::{ConditionMessage, ScriptError, SyntaxError, SyntaxMessage, MAX_SQL_PARAMETERS};
use meta::Parsed;
use sql::{ScanStop, SqlBuffer, SqlScanner};

/// pgbench's `first_line` of an SQL command: at most 127 bytes, up to the first newline.
const FIRST_LINE_MAX: usize = 127;

/// Parse a whole script.
///
/// `name` is the source named in syntax errors (the file path, `-` for stdin, or the
/// builtin's name); `desc` is what the report shows and what condition and empty-script
/// errors name (pgbench uses the file path for both).
pub fn parse_script(name: &str, desc: &str, text: &str) -> Result<Script, ScriptError> {
    // pgbench hands the script to the lexer with strlen(): it ends at the first NUL
    let text = text.split('\0').next().unwrap_or_default();
    let mut scanner = SqlScanner::new(text);
    let mut lines = LineCounter::default();
    let mut commands: Vec<Command> = Vec::new();
    let mut started = false;
    loop {
        // where this scan starts, for the line pgbench names in \gset errors
        let scan_from = started.then(|| scanner.position());
        started = true;
        let mut buf = SqlBuffer::default();
        let stop = scanner.scan(&mut buf);
        if let Some(command) = sql_command(&buf, &mut lines, text) {
            commands.push(command);
        }
        let backslash = match stop {
            ScanStop::Semicolon => continue,
            ScanStop::Eof => break,
            ScanStop::Backslash(at) => at,
        };
        let line_no = lines.line_of(text, backslash);
        let (parsed, resume) = meta::parse_backslash(text, backslash, name, line_no)?;
        scanner.seek(resume);
        let Some(meta) = parsed else { continue };
        match meta.parsed {
            Parsed::Command(kind) => commands.push(Command {
                line: line_no,
                first_line: meta.first_line,
                kind: CommandKind::Meta(kind),
            }),
            Parsed::Target(target) => attach_target(&mut commands, target, name, || {
                gset_error_line(text, scan_from)
            })?,
        }
    }
    if commands.is_empty() {
        return Err(ScriptError::EmptyCommandList {
            script: desc.to_string(),
        });
    }
    check_conditionals(desc, &commands)?;
    Ok(Script {
        name: name.to_string(),
        desc: desc.to_string(),
        commands,
    })
}

/// Parse one expression, as the argument of `\set` would be (for tests and tools).
/// Parsing stops at the first newline that is not a continuation. Errors name the
/// source `expr`, line 1, with columns counted from the start of `text`.
pub fn parse_expression(text: &str) -> Result<ast::Expr, ScriptError> {
    let text = text.split('\0').next().unwrap_or_default();
    let site = expr::ExprSite {
        source: "expr",
        line_no: 1,
        line_start: 0,
        command: None,
    };
    expr::parse_expr(text, 0, &site).map(|(expr, _)| expr)
}

/// The check pgbench makes on SQL commands in extended and prepared mode: at most 255
/// `:name` parameters per command.
pub fn check_parameter_count(sql: &SqlCommand) -> Result<(), ScriptError> {
    if sql.parameters().count() > MAX_SQL_PARAMETERS {
        return Err(ScriptError::TooManyParameters {
            sql: sql.text.clone(),
        });
    }
    Ok(())
}

/// pgbench's `create_sql_command`: `None` when the collected text is only whitespace
/// and comments.
fn sql_command(buf: &SqlBuffer, lines: &mut LineCounter, script: &str) -> Option<Command> {
    let skip = sql::skip_sql_comments(&buf.text)?;
    let text = &buf.text[skip..];
    let mut cut = text.len().min(FIRST_LINE_MAX);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let first_line = text[..cut].split(['\n', '\r']).next().unwrap_or_default();
    Some(Command {
        line: lines.line_of(script, buf.start + skip),
        first_line: first_line.to_string(),
        kind: CommandKind::Sql(SqlCommand {
            text: text.to_string(),
            pieces: sql::split_variables(text),
            target: ResultTarget::Discard,
        }),
    })
}

/// The line pgbench 15 names when `\gset` / `\aset` is misplaced: not the command's own
/// line but the one where the current scan started, as pgbench counts newlines up to
/// the NUL flex left after the last token (before any token, up to the last byte).
fn gset_error_line(text: &str, scan_from: Option<usize>) -> usize {
    let end = scan_from.unwrap_or(text.len().saturating_sub(1));
    1 + text.as_bytes()[..end]
        .iter()
        .filter(|&&c| c == b'\n')
        .count()
}

/// Merge `\gset` / `\aset` into the SQL command before it; `line_no` gives the line
/// to name if it cannot be.
fn attach_target(
    commands: &mut [Command],
    target: ResultTarget,
    source: &str,
    line_no: impl Fn() -> usize,
) -> Result<(), ScriptError> {
    let misplaced = |detail: Option<&str>| SyntaxError {
        source: source.to_string(),
        line_no: line_no(),
        line: None,
        command: None,
        message: SyntaxMessage::GsetMustFollowSql,
        detail: detail.map(str::to_string),
        column: None,
    };
    let Some(previous) = commands.last_mut() else {
        return Err(misplaced(None).into());
    };
    match &mut previous.kind {
        CommandKind::Sql(sql) if sql.target == ResultTarget::Discard => {
            sql.target = target;
            Ok(())
        }
        // pgbench sets an SQL command's first_line only later, so it shows no detail
        CommandKind::Sql(_) => Err(misplaced(None).into()),
        CommandKind::Meta(_) => Err(misplaced(Some(&previous.first_line)).into()),
    }
}

/// pgbench's `CheckConditional`: `\if` ... `\elif` ... `\else` ... `\endif` nesting.
fn check_conditionals(desc: &str, commands: &[Command]) -> Result<(), ScriptError> {
    let error = |command: usize, message| ScriptError::Condition {
        script: desc.to_string(),
        command,
        message,
    };
    // one entry per open \if: whether its \else was seen
    let mut open: Vec<bool> = Vec::new();
    for (i, command) in commands.iter().enumerate() {
        let CommandKind::Meta(meta) = &command.kind else {
            continue;
        };
        match meta {
            MetaCommand::If(_) => open.push(false),
            MetaCommand::Elif(_) => match open.last() {
                None => return Err(error(i + 1, ConditionMessage::ElifWithoutIf)),
                Some(true) => return Err(error(i + 1, ConditionMessage::ElifAfterElse)),
                Some(false) => {}
            },
            MetaCommand::Else => match open.last_mut() {
                None => return Err(error(i + 1, ConditionMessage::ElseWithoutIf)),
                Some(true) => return Err(error(i + 1, ConditionMessage::ElseAfterElse)),
                Some(seen) => *seen = true,
            },
            MetaCommand::Endif => {
                open.pop()
                    .ok_or_else(|| error(i + 1, ConditionMessage::EndifWithoutIf))?;
            }
            _ => {}
        }
    }
    if !open.is_empty() {
        return Err(error(commands.len() + 1, ConditionMessage::IfWithoutEndif));
    }
    Ok(())
}

/// Line numbers of offsets that only move forward, without rescanning the script.
#[derive(Default)]
struct LineCounter {
    offset: usize,
    line: usize,
}

impl LineCounter {
    fn line_of(&mut self, text: &str, offset: usize) -> usize {
        if offset < self.offset {
            *self = LineCounter::default();
        }
        self.line += text.as_bytes()[self.offset..offset]
            .iter()
            .filter(|&&c| c == b'\n')
            .count();
        self.offset = offset;
        self.line + 1
    }
}
