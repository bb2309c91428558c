//! Backslash commands: pgbench's `process_backslash_command()`. The words of the line
//! come from the `meta_next_word` / `meta_words` rules of `script.pest`; `\set`, `\if`
//! and `\elif` hand the rest of their line to the expression parser.

use pest::Parser;

use super::expr::{chomp, parse_expr, ExprSite};
use super::grammar::{Grammar, Rule};
use crate::ast::{MetaCommand, ResultTarget, ShellArg, SleepArg};
use crate::error::{ScriptError, SyntaxError, SyntaxMessage};

/// pgbench's `MAX_ARGS`: a command word and at most 255 arguments.
const MAX_ARGS: usize = 256;

/// What a backslash line turned out to be.
#[derive(Debug)]
pub(crate) enum Parsed {
    Command(MetaCommand),
    /// `\gset` / `\aset`, to be merged into the SQL command before it.
    Target(ResultTarget),
}

/// A parsed backslash line.
#[derive(Debug)]
pub(crate) struct Backslash {
    pub parsed: Parsed,
    /// The line as `-r` shows it: from the backslash to the end of the logical line.
    pub first_line: String,
}

/// A word of the line.
struct Word<'a> {
    text: &'a str,
    /// Where pgbench says the word starts (for error carets): exprscan.l computes it
    /// as the end of the matched token minus the word's length, so a word glued to a
    /// continuation ("word\" + newline) is placed as many bytes too far right.
    offset: usize,
    /// Offset after the word.
    end: usize,
}

impl<'a> Word<'a> {
    fn new(src: &'a str, start: usize, end: usize) -> Self {
        let rest = &src.as_bytes()[end..];
        let glued = if rest.starts_with(b"\\\n") {
            2
        } else if rest.starts_with(b"\\\r\n") {
            3
        } else {
            0
        };
        Word {
            text: &src[start..end],
            offset: start + glued,
            end,
        }
    }
}

/// Parse the backslash command whose `\` is at `backslash`. Returns `None` when the line
/// has no word (a lone backslash), and the offset where SQL scanning resumes.
pub(crate) fn parse_backslash(
    src: &str,
    backslash: usize,
    source: &str,
    line_no: usize,
) -> Result<(Option<Backslash>, usize), ScriptError> {
    let (content_end, line_end) = logical_line_end(src.as_bytes(), backslash);
    let Some(command) = next_word(src, backslash + 1, content_end) else {
        return Ok((None, line_end));
    };
    let first_line = chomp(&src[backslash..line_end]).to_string();
    let site = Site {
        source,
        line_no,
        backslash,
        first_line: &first_line,
        command: command.text,
    };
    let word = command.text.to_ascii_lowercase();
    let (parsed, resume) = if matches!(word.as_str(), "set" | "if" | "elif") {
        // the words stop here: the rest of the line is the expression
        let (meta, end) = expression_command(src, &word, &command, content_end, &site)?;
        (Parsed::Command(meta), end)
    } else {
        let args = split_words(src, command.end, content_end);
        if args.len() >= MAX_ARGS {
            return Err(site.error(SyntaxMessage::TooManyArguments, false, None, None));
        }
        (word_command(&word, &args, &site)?, line_end)
    };
    Ok((Some(Backslash { parsed, first_line }), resume))
}

/// `\set var expr`, `\if expr`, `\elif expr`: the command and where its expression's
/// line ends.
fn expression_command(
    src: &str,
    word: &str,
    command: &Word<'_>,
    content_end: usize,
    site: &Site<'_>,
) -> Result<(MetaCommand, usize), ScriptError> {
    let var = if word == "set" {
        match next_word(src, command.end, content_end) {
            Some(var) => Some(var),
            None => return Err(site.error(SyntaxMessage::MissingArgument, false, None, None)),
        }
    } else {
        None
    };
    let expr_start = var.as_ref().map_or(command.end, |v| v.end);
    let expr_site = ExprSite {
        source: site.source,
        line_no: site.line_no,
        line_start: site.backslash,
        command: Some(command.text),
    };
    let (expr, end) = parse_expr(src, expr_start, &expr_site)?;
    let meta = match word {
        "set" => MetaCommand::Set {
            var: var.map_or_else(String::new, |v| v.text.to_string()),
            expr,
        },
        "if" => MetaCommand::If(expr),
        _ => MetaCommand::Elif(expr),
    };
    Ok((meta, end))
}

/// Every other command, from its (lower-cased) word and its arguments.
fn word_command(word: &str, args: &[Word<'_>], site: &Site<'_>) -> Result<Parsed, ScriptError> {
    let error = |message| site.error(message, true, None, None);
    let no_argument = |meta| {
        if args.is_empty() {
            Ok(Parsed::Command(meta))
        } else {
            Err(error(SyntaxMessage::UnexpectedArgument))
        }
    };
    Ok(match word {
        "sleep" => {
            let (duration, unit_us) = sleep(args, site)?;
            Parsed::Command(MetaCommand::Sleep { duration, unit_us })
        }
        "setshell" => {
            if args.len() < 2 {
                return Err(error(SyntaxMessage::MissingArgument));
            }
            Parsed::Command(MetaCommand::SetShell {
                var: args[0].text.to_string(),
                command: args[1].text.to_string(),
                args: args[2..].iter().map(|w| shell_arg(w.text)).collect(),
            })
        }
        "shell" => {
            if args.is_empty() {
                return Err(error(SyntaxMessage::MissingCommand));
            }
            Parsed::Command(MetaCommand::Shell {
                command: args[0].text.to_string(),
                args: args[1..].iter().map(|w| shell_arg(w.text)).collect(),
            })
        }
        // pgbench-rs extra: sysbench's random strings
        "setrandstr" => match args {
            [var, template] => Parsed::Command(MetaCommand::SetRandStr {
                var: var.text.to_string(),
                template: template.text.to_string(),
            }),
            [] | [_] => return Err(error(SyntaxMessage::MissingArgument)),
            _ => return Err(error(SyntaxMessage::TooManyArguments)),
        },
        "else" => no_argument(MetaCommand::Else)?,
        "endif" => no_argument(MetaCommand::Endif)?,
        "startpipeline" => no_argument(MetaCommand::StartPipeline)?,
        // pgbench 17's \syncpipeline; pgbench 15 calls it an invalid command
        "syncpipeline" => no_argument(MetaCommand::SyncPipeline)?,
        "endpipeline" => no_argument(MetaCommand::EndPipeline)?,
        "gset" | "aset" => {
            if args.len() > 1 {
                return Err(error(SyntaxMessage::TooManyArguments));
            }
            let prefix = args
                .first()
                .map_or_else(String::new, |w| w.text.to_string());
            Parsed::Target(if word == "gset" {
                ResultTarget::Gset { prefix }
            } else {
                ResultTarget::Aset { prefix }
            })
        }
        _ => return Err(error(SyntaxMessage::InvalidCommand)),
    })
}

/// A backslash command's place in the script, for its error messages.
struct Site<'a> {
    source: &'a str,
    line_no: usize,
    backslash: usize,
    first_line: &'a str,
    /// The command word as written.
    command: &'a str,
}

impl Site<'_> {
    /// pgbench's `syntax_error()` for this command. `line`: whether pgbench prints the
    /// command's line (it only knows it once all words are read); `at`: the script
    /// offset the caret points at.
    fn error(
        &self,
        message: SyntaxMessage,
        line: bool,
        detail: Option<&str>,
        at: Option<usize>,
    ) -> ScriptError {
        ScriptError::from(SyntaxError {
            source: self.source.to_string(),
            line_no: self.line_no,
            line: line.then(|| self.first_line.to_string()),
            command: Some(self.command.to_string()),
            message,
            detail: detail.map(str::to_string),
            column: at.map(|offset| offset - self.backslash),
        })
    }
}

/// Where the backslash line starting at `backslash` ends: the first newline not
/// preceded by a continuation backslash (the command's own backslash does not count).
/// Returns the offset of that newline (or the script's end) and the offset after it.
fn logical_line_end(text: &[u8], backslash: usize) -> (usize, usize) {
    let mut i = backslash + 1;
    while let Some(n) = text[i.min(text.len())..].iter().position(|&c| c == b'\n') {
        let nl = i + n;
        let continued = (nl >= backslash + 2 && text[nl - 1] == b'\\')
            || (nl >= backslash + 3 && text[nl - 1] == b'\r' && text[nl - 2] == b'\\');
        if !continued {
            return (nl, nl + 1);
        }
        i = nl + 1;
    }
    (text.len(), text.len())
}

/// The first word of `src[from..to]`.
fn next_word(src: &str, from: usize, to: usize) -> Option<Word<'_>> {
    let pair = Grammar::parse(Rule::meta_next_word, &src[from..to])
        .ok()?
        .next()?;
    let word = pair.into_inner().find(|p| p.as_rule() == Rule::meta_word)?;
    let span = word.as_span();
    Some(Word::new(src, from + span.start(), from + span.end()))
}

/// The whitespace-separated words of `src[from..to]`.
fn split_words(src: &str, from: usize, to: usize) -> Vec<Word<'_>> {
    // `meta_words` accepts any text, so the fallback never applies
    let Ok(mut pairs) = Grammar::parse(Rule::meta_words, &src[from..to]) else {
        return Vec::new();
    };
    pairs
        .next()
        .into_iter()
        .flat_map(|p| p.into_inner())
        .filter(|p| p.as_rule() == Rule::meta_word)
        .map(|p| Word::new(src, from + p.as_span().start(), from + p.as_span().end()))
        .collect()
}

/// `\sleep N [us|ms|s]`, `\sleep Nunit`, `\sleep :var [unit]`.
fn sleep(args: &[Word<'_>], site: &Site<'_>) -> Result<(SleepArg, i64), ScriptError> {
    let error = |message, detail, at| site.error(message, true, detail, at);
    let Some(time) = args.first() else {
        return Err(error(SyntaxMessage::MissingArgument, None, None));
    };
    if let Some(extra) = args.get(2) {
        return Err(error(
            SyntaxMessage::TooManyArguments,
            None,
            Some(extra.offset),
        ));
    }
    let mut unit = args.get(1).map(|w| (w.text, w.offset));
    let duration = if let Some(name) = time.text.strip_prefix(':') {
        SleepArg::Var(name.to_string())
    } else {
        // an optional sign, then digits; a unit may be glued to them ("10ms")
        let bytes = time.text.as_bytes();
        let sign = usize::from(matches!(bytes[0], b'+' | b'-'));
        let digits = bytes[sign..]
            .iter()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let rest = sign + digits;
        if rest < bytes.len() {
            if args.len() == 1 && digits > 0 {
                unit = Some((&time.text[rest..], time.offset + rest));
            } else {
                return Err(error(
                    SyntaxMessage::InvalidSleepTime,
                    Some(time.text),
                    Some(time.offset),
                ));
            }
        }
        SleepArg::Const(atoi(time.text))
    };
    let unit_us = match unit {
        None => 1_000_000,
        Some((u, _)) if u.eq_ignore_ascii_case("us") => 1,
        Some((u, _)) if u.eq_ignore_ascii_case("ms") => 1_000,
        Some((u, _)) if u.eq_ignore_ascii_case("s") => 1_000_000,
        Some((u, start)) => {
            return Err(error(
                SyntaxMessage::UnrecognizedTimeUnit,
                Some(u),
                Some(start),
            ));
        }
    };
    Ok((duration, unit_us))
}

/// C's `atoi`: `strtol` (saturating at the `long` range) truncated to `int`.
fn atoi(text: &str) -> i64 {
    let bytes = text.as_bytes();
    let negative = bytes.first() == Some(&b'-');
    let sign = usize::from(matches!(bytes.first(), Some(b'+' | b'-')));
    let cap = 1u128 << 64;
    let magnitude = bytes[sign..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .fold(0u128, |acc, &d| (acc * 10 + u128::from(d - b'0')).min(cap));
    let value = if negative {
        i64::try_from(-(magnitude as i128)).unwrap_or(i64::MIN)
    } else {
        i64::try_from(magnitude).unwrap_or(i64::MAX)
    };
    // the (int) cast keeps the low 32 bits
    i64::from(value as i32)
}

/// A `\shell` / `\setshell` argument: `:name` is a variable, `::x` the literal `:x`.
fn shell_arg(word: &str) -> ShellArg {
    match word.strip_prefix(':') {
        Some(rest) if rest.starts_with(':') => ShellArg::Literal(rest.to_string()),
        Some(name) => ShellArg::Var(name.to_string()),
        None => ShellArg::Literal(word.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(line: &str) -> Vec<&str> {
        split_words(line, 0, line.len())
            .into_iter()
            .map(|w| w.text)
            .collect()
    }

    #[test]
    fn words_split_on_blanks_without_quoting() {
        assert_eq!(words(" a\t'b c' \x0b\x0cd\r"), ["a", "'b", "c'", "d"]);
    }

    #[test]
    fn continuation_is_blank_also_when_glued_to_a_word() {
        assert_eq!(words("ab\\\ncd"), ["ab", "cd"]);
        assert_eq!(words("ab\\\r\ncd"), ["ab", "cd"]);
        assert_eq!(words("a\\\\\nb"), ["a\\", "b"]);
        assert_eq!(words("\\\nb"), ["b"]);
        assert_eq!(words("a\\b \\"), ["a\\b", "\\"]);
    }

    #[test]
    fn logical_lines() {
        assert_eq!(logical_line_end(b"\\set x 1\nSELECT", 0), (8, 9));
        assert_eq!(logical_line_end(b"\\set x 1 \\\n+ 2\nX", 0), (14, 15));
        assert_eq!(logical_line_end(b"\\set x 1 \\\r\n+ 2", 0), (15, 15));
        // the command's own backslash is no continuation
        assert_eq!(logical_line_end(b"\\\nSELECT 1", 0), (1, 2));
        assert_eq!(logical_line_end(b"\\\r\nSELECT 1", 0), (2, 3));
    }

    #[test]
    fn atoi_like_c() {
        assert_eq!(atoi("10ms"), 10);
        assert_eq!(atoi("-5"), -5);
        assert_eq!(atoi("+7"), 7);
        assert_eq!(atoi("-"), 0);
        assert_eq!(atoi("4294967296"), 0);
        assert_eq!(atoi("2147483648"), -2147483648);
        assert_eq!(atoi("99999999999999999999"), -1);
        assert_eq!(atoi("-99999999999999999999"), 0);
        assert_eq!(atoi("-9223372036854775807"), 1);
    }

    #[test]
    fn shell_args() {
        assert_eq!(shell_arg("x"), ShellArg::Literal("x".into()));
        assert_eq!(shell_arg(":x"), ShellArg::Var("x".into()));
        assert_eq!(shell_arg("::x"), ShellArg::Literal(":x".into()));
        assert_eq!(shell_arg(":::x"), ShellArg::Literal("::x".into()));
    }
}
