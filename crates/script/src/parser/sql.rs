//! SQL framing: where an SQL command of a script ends, following psql's lexer
//! (`src/fe_utils/psqlscan.l`) the way pgbench sets it up (encoding SQL_ASCII,
//! `standard_conforming_strings` on), and the split of a command's text at `:name`.
//!
//! The scanner only tracks what decides framing: quotes (`'...'`, `E'...'`, `U&'...'`,
//! `B'...'`, `X'...'`, `"..."`, `U&"..."`, `$tag$...$tag$`), nested `/* */` comments,
//! `--` comments, parenthesis depth, the `CREATE [OR REPLACE] FUNCTION|PROCEDURE ...
//! BEGIN ... END` heuristic, `\;`, `\:`, the backslash that starts a meta-command, and
//! where numeric tokens end (PostgreSQL 15 reads `1e-` and `1abc` as one token each,
//! which decides whether a following `--` or `e'` starts a comment or a literal).
//! As in pgbench, its state (depths, identifier counts) lives across commands: pgbench
//! never resets the psql lexer between commands.

use super::sql_tokens::{
    c_comment_end, colon_token_end, dollar_end, double_quoted_end, is_ident_cont, is_ident_start,
    is_sql_space, is_variable_char, line_end, number_end, quoted_end, Quote,
};
use crate::ast::SqlPiece;

/// Why [`SqlScanner::scan`] stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ScanStop {
    /// A command-terminating `;` (already appended to the buffer).
    Semicolon,
    /// An unquoted backslash at this byte offset; the meta-command starts after it.
    Backslash(usize),
    /// End of the script.
    Eof,
}

/// The part of a command collected by one [`SqlScanner::scan`] call.
#[derive(Debug, Default)]
pub(crate) struct SqlBuffer {
    /// The text as psql's lexer emits it (`\;` and `\:` lose their backslash).
    pub text: String,
    /// Script offset of the first byte of `text`.
    pub start: usize,
}

/// psql's lexer state, kept from one command to the next.
pub(crate) struct SqlScanner<'a> {
    text: &'a [u8],
    src: &'a str,
    pos: usize,
    paren_depth: usize,
    begin_depth: usize,
    identifier_count: usize,
    /// First letters of the first four identifiers of the statement, when they are one
    /// of CREATE, OR, REPLACE, FUNCTION, PROCEDURE (psqlscan.l's `identifiers`).
    identifiers: [u8; 4],
}

impl<'a> SqlScanner<'a> {
    pub(crate) fn new(src: &'a str) -> Self {
        SqlScanner {
            text: src.as_bytes(),
            src,
            pos: 0,
            paren_depth: 0,
            begin_depth: 0,
            identifier_count: 0,
            identifiers: [0; 4],
        }
    }

    /// Where scanning continues.
    pub(crate) fn position(&self) -> usize {
        self.pos
    }

    /// Continue scanning at `pos` (after a meta-command).
    pub(crate) fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.text.len());
    }

    fn at(&self, i: usize) -> u8 {
        self.text.get(i).copied().unwrap_or(0)
    }

    /// Append `text[from..to]` to the buffer.
    fn echo(&self, buf: &mut SqlBuffer, from: usize, to: usize) {
        if buf.text.is_empty() {
            buf.start = from;
        }
        buf.text.push_str(&self.src[from..to]);
    }

    /// Scan SQL text into `buf` until a terminating `;`, an unquoted backslash or the end.
    pub(crate) fn scan(&mut self, buf: &mut SqlBuffer) -> ScanStop {
        let text = self.text;
        while self.pos < text.len() {
            let start = self.pos;
            let b = text[start];
            match b {
                _ if is_sql_space(b) => {
                    let mut end = start;
                    while end < text.len() && is_sql_space(text[end]) {
                        end += 1;
                    }
                    self.whitespace(buf, start, end);
                }
                b'-' if self.at(start + 1) == b'-' => {
                    let end = line_end(text, start);
                    self.whitespace(buf, start, end);
                }
                b'/' if self.at(start + 1) == b'*' => {
                    self.token(buf, start, c_comment_end(text, start + 2));
                }
                b'\'' => self.token(buf, start, quoted_end(text, start + 1, Quote::Plain)),
                b'"' => self.token(buf, start, double_quoted_end(text, start + 1)),
                b'$' => self.token(buf, start, dollar_end(text, start)),
                b'(' => {
                    self.paren_depth += 1;
                    self.echo(buf, start, start + 1);
                    self.pos = start + 1;
                }
                b')' => {
                    self.paren_depth = self.paren_depth.saturating_sub(1);
                    self.echo(buf, start, start + 1);
                    self.pos = start + 1;
                }
                b';' => {
                    self.echo(buf, start, start + 1);
                    self.pos = start + 1;
                    if self.paren_depth == 0 && self.begin_depth == 0 {
                        self.identifier_count = 0;
                        return ScanStop::Semicolon;
                    }
                }
                b'\\' => match self.at(start + 1) {
                    b';' | b':' => {
                        // `\;` and `\:` put a bare `;` / `:` into the command
                        self.echo(buf, start + 1, start + 2);
                        if text[start + 1] == b';' {
                            self.identifier_count = 0;
                        }
                        self.pos = start + 2;
                    }
                    _ => {
                        self.pos = start + 1;
                        return ScanStop::Backslash(start);
                    }
                },
                b':' => {
                    let end = colon_token_end(text, start);
                    if text[start..end].starts_with(b":{?") {
                        // psql's "is this variable defined" test: pgbench has no psql
                        // variables, so the lexer always emits FALSE
                        if buf.text.is_empty() {
                            buf.start = start;
                        }
                        buf.text.push_str("FALSE");
                    } else {
                        self.echo(buf, start, end);
                    }
                    self.pos = end;
                }
                b'0'..=b'9' => self.token(buf, start, number_end(text, start)),
                b'.' if self.at(start + 1).is_ascii_digit() => {
                    self.token(buf, start, number_end(text, start))
                }
                _ if is_ident_start(b) => self.word(buf, start),
                _ => {
                    // operators and other ASCII punctuation (bytes >= 0x80 are letters):
                    // one byte at a time is enough, since `--` and `/*` always start a
                    // comment, even right after operator characters
                    self.echo(buf, start, start + 1);
                    self.pos = start + 1;
                }
            }
        }
        ScanStop::Eof
    }

    /// psqlscan.l drops whitespace and `--` comments until the command has some text.
    fn whitespace(&mut self, buf: &mut SqlBuffer, start: usize, end: usize) {
        if !buf.text.is_empty() {
            self.echo(buf, start, end);
        }
        self.pos = end;
    }

    /// A token from `start` to `end`, taken whole.
    fn token(&mut self, buf: &mut SqlBuffer, start: usize, end: usize) {
        self.echo(buf, start, end);
        self.pos = end;
    }

    /// A token starting with a letter: a special literal prefix or an identifier.
    fn word(&mut self, buf: &mut SqlBuffer, start: usize) {
        let b = self.text[start].to_ascii_lowercase();
        let next = self.at(start + 1);
        match (b, next) {
            (b'e', b'\'') => {
                return self.token(buf, start, quoted_end(self.text, start + 2, Quote::Escape))
            }
            (b'b' | b'x', b'\'') => {
                return self.token(buf, start, quoted_end(self.text, start + 2, Quote::Plain))
            }
            (b'n', b'\'') => {
                // national character literal: only the `n` is taken, the quote follows
                self.echo(buf, start, start + 1);
                self.pos = start + 1;
                return;
            }
            (b'u', b'&') => {
                match self.at(start + 2) {
                    b'\'' => self.token(buf, start, quoted_end(self.text, start + 3, Quote::Plain)),
                    b'"' => self.token(buf, start, double_quoted_end(self.text, start + 3)),
                    _ => {
                        self.echo(buf, start, start + 1);
                        self.pos = start + 1;
                    }
                }
                return;
            }
            _ => {}
        }
        let text = self.text;
        let mut end = start + 1;
        while end < text.len() && is_ident_cont(text[end]) {
            end += 1;
        }
        self.identifier(&text[start..end]);
        self.echo(buf, start, end);
        self.pos = end;
    }

    /// psqlscan.l's heuristic: inside `CREATE [OR REPLACE] FUNCTION|PROCEDURE`, a `;`
    /// between BEGIN and its END does not end the command.
    fn identifier(&mut self, word: &[u8]) {
        if self.identifier_count == 0 {
            self.identifiers = [0; 4];
        }
        let is = |kw: &str| word.eq_ignore_ascii_case(kw.as_bytes());
        if ["create", "function", "procedure", "or", "replace"]
            .iter()
            .any(|kw| is(kw))
            && self.identifier_count < self.identifiers.len()
        {
            self.identifiers[self.identifier_count] = word[0].to_ascii_lowercase();
        }
        self.identifier_count += 1;

        let ids = self.identifiers;
        let in_routine = ids[0] == b'c'
            && (ids[1] == b'f'
                || ids[1] == b'p'
                || (ids[1] == b'o' && ids[2] == b'r' && (ids[3] == b'f' || ids[3] == b'p')));
        if in_routine && self.paren_depth == 0 {
            if is("begin") {
                self.begin_depth += 1;
            } else if is("case") {
                // CASE also ends with END; it only matters inside a BEGIN
                if self.begin_depth >= 1 {
                    self.begin_depth += 1;
                }
            } else if is("end") {
                self.begin_depth = self.begin_depth.saturating_sub(1);
            }
        }
    }
}

/// pgbench's `skip_sql_comments`: the offset in `text` where the command starts after
/// leading whitespace (C `isspace`) and `--` comment lines, or `None` when nothing is
/// left (a `--` comment with no newline after it swallows the rest).
pub(crate) fn skip_sql_comments(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 0;
    loop {
        match bytes.get(i) {
            Some(b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c') => i += 1,
            Some(b'-') if bytes.get(i + 1) == Some(&b'-') => {
                i += bytes[i..].iter().position(|&c| c == b'\n')? + 1;
            }
            Some(_) => return Some(i),
            None => return None,
        }
    }
}

/// Split SQL text at its `:name` references the way pgbench substitutes them: a colon
/// followed by `[A-Za-z_\x80-\xff]` starts a name of `[A-Za-z0-9_\x80-\xff]*`, any other
/// colon is literal together with the colons right after it (so `x::int` stays as is).
/// Quotes and comments are not looked at: `':x'` is substituted too.
pub(crate) fn split_variables(text: &str) -> Vec<SqlPiece> {
    let bytes = text.as_bytes();
    let mut pieces = Vec::new();
    let mut literal_start = 0;
    let mut i = 0;
    while let Some(n) = bytes[i..].iter().position(|&c| c == b':') {
        let colon = i + n;
        let name_start = colon + 1;
        if bytes.get(name_start).is_some_and(|&c| is_ident_start(c)) {
            let mut end = name_start + 1;
            while end < bytes.len() && is_variable_char(bytes[end]) {
                end += 1;
            }
            if colon > literal_start {
                pieces.push(SqlPiece::Text(text[literal_start..colon].to_string()));
            }
            pieces.push(SqlPiece::Var(text[name_start..end].to_string()));
            literal_start = end;
            i = end;
        } else {
            i = colon;
            while bytes.get(i) == Some(&b':') {
                i += 1;
            }
        }
    }
    if literal_start < bytes.len() {
        pieces.push(SqlPiece::Text(text[literal_start..].to_string()));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(src: &str) -> Vec<(String, ScanStop)> {
        let mut scanner = SqlScanner::new(src);
        let mut out = Vec::new();
        loop {
            let mut buf = SqlBuffer::default();
            let stop = scanner.scan(&mut buf);
            out.push((buf.text, stop));
            match stop {
                ScanStop::Eof => return out,
                ScanStop::Backslash(at) => {
                    scanner.seek(src[at..].find('\n').map_or(src.len(), |n| at + n + 1))
                }
                ScanStop::Semicolon => {}
            }
        }
    }

    fn texts(src: &str) -> Vec<String> {
        frame(src)
            .into_iter()
            .map(|(t, _)| t)
            .filter(|t| !t.is_empty())
            .collect()
    }

    #[test]
    fn semicolons_in_quotes_and_comments_do_not_end_a_command() {
        assert_eq!(
            texts("SELECT ';', \";\", $$;$$, $a$ $b$; $a$, /* ; /* ; */ ; */ 1 -- ;\n;"),
            ["SELECT ';', \";\", $$;$$, $a$ $b$; $a$, /* ; /* ; */ ; */ 1 -- ;\n;"]
        );
    }

    #[test]
    fn escape_strings_honour_backslashes_only_with_e_prefix() {
        assert_eq!(
            texts("SELECT E'\\';' ; SELECT 2;"),
            ["SELECT E'\\';' ;", "SELECT 2;"]
        );
        // without E the backslash is an ordinary character: the literal ends at \'
        assert_eq!(texts("SELECT '\\'; x"), ["SELECT '\\';", "x"]);
        // '' inside E'' does not end it
        assert_eq!(texts("SELECT e'a''\\';b'; 1"), ["SELECT e'a''\\';b';", "1"]);
    }

    #[test]
    fn quote_continuation_keeps_the_escape_state() {
        assert_eq!(
            texts("SELECT E'a'\n'\\';' ; 2"),
            ["SELECT E'a'\n'\\';' ;", "2"]
        );
        assert_eq!(texts("SELECT 'a' '\\'; 2"), ["SELECT 'a' '\\';", "2"]);
    }

    #[test]
    fn parentheses_hold_semicolons() {
        assert_eq!(texts("SELECT (1; 2); 3"), ["SELECT (1; 2);", "3"]);
        assert_eq!(texts("SELECT 1); 2;"), ["SELECT 1);", "2;"]);
    }

    #[test]
    fn backslash_semicolon_joins_statements() {
        assert_eq!(texts("SELECT 1 \\; SELECT 2;"), ["SELECT 1 ; SELECT 2;"]);
        assert_eq!(texts("SELECT \\:x;"), ["SELECT :x;"]);
    }

    #[test]
    fn backslash_stops_the_scan() {
        let got = frame("SELECT 1 \\gset\nSELECT 2");
        assert_eq!(got[0], ("SELECT 1 ".to_string(), ScanStop::Backslash(9)));
        assert_eq!(got[1], ("SELECT 2".to_string(), ScanStop::Eof));
    }

    #[test]
    fn leading_whitespace_and_dash_comments_are_dropped_but_inner_ones_kept() {
        assert_eq!(
            texts("  -- c\n\t SELECT 1 -- d\n  ;"),
            ["SELECT 1 -- d\n  ;"]
        );
    }

    #[test]
    fn create_function_begin_atomic_is_one_command() {
        let src = "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql\n\
                   BEGIN ATOMIC SELECT CASE WHEN true THEN 1 END; SELECT 2; END; SELECT 3;";
        assert_eq!(
            texts(src),
            [
                "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql\nBEGIN ATOMIC SELECT CASE WHEN true THEN 1 END; SELECT 2; END;",
                "SELECT 3;"
            ]
        );
        // BEGIN outside a routine definition is a transaction start
        assert_eq!(texts("BEGIN; SELECT 1;"), ["BEGIN;", "SELECT 1;"]);
    }

    #[test]
    fn identifiers_are_counted_across_backslash_commands() {
        // pgbench never resets the lexer: after `SELECT 1 \gset` the CREATE is not the
        // statement's first identifier, so BEGIN ATOMIC is not recognised
        let got = texts("SELECT 1 \\gset\nCREATE FUNCTION f() BEGIN ATOMIC SELECT 1; END;");
        assert_eq!(
            got,
            [
                "SELECT 1 ",
                "CREATE FUNCTION f() BEGIN ATOMIC SELECT 1;",
                "END;"
            ]
        );
    }

    #[test]
    fn psql_variable_test_is_always_false() {
        assert_eq!(
            texts("SELECT :{?v}, :{?}, :{?v;"),
            ["SELECT FALSE, :{?}, :{?v;"]
        );
    }

    #[test]
    fn psql_variable_forms_do_not_open_quotes() {
        assert_eq!(
            texts("SELECT :'v'; SELECT 2;"),
            ["SELECT :'v';", "SELECT 2;"]
        );
        assert_eq!(texts("SELECT :'v ;'; 2"), ["SELECT :'v ;';", "2"]);
        assert_eq!(texts("SELECT x::int; 2"), ["SELECT x::int;", "2"]);
    }

    #[test]
    fn unterminated_constructs_run_to_the_end() {
        assert_eq!(texts("SELECT 'abc; 1"), ["SELECT 'abc; 1"]);
        assert_eq!(texts("SELECT $q$ ; "), ["SELECT $q$ ; "]);
        assert_eq!(texts("SELECT /* ; "), ["SELECT /* ; "]);
    }

    #[test]
    fn numbers_take_glued_identifiers_and_dangling_exponents() {
        // `.5e` is one token, so `'...'` after it is a plain string, not E'...'
        assert_eq!(texts("SELECT .5e'\\'; 2"), ["SELECT .5e'\\';", "2"]);
        // `1e-` is one token: the next `-` does not start a `--` comment
        assert_eq!(texts("SELECT 1e-- c ; 2"), ["SELECT 1e-- c ;", "2"]);
        assert_eq!(texts("SELECT 1e+-- c ; 2\n;"), ["SELECT 1e+-- c ; 2\n;"]);
        assert_eq!(
            texts("SELECT 1xe'\\';' ; 2;"),
            ["SELECT 1xe'\\';", "' ; 2;"]
        );
    }

    #[test]
    fn dollar_tags() {
        // an identifier may contain `$`, so `a$b$` is no quote
        assert_eq!(texts("SELECT a$b$; 1"), ["SELECT a$b$;", "1"]);
        assert_eq!(texts("SELECT $1; 2"), ["SELECT $1;", "2"]);
        // `$b$a$` ends the quote: the closing tag is the first `$a$`, as in flex
        assert_eq!(
            texts("SELECT $a$ $b$a$ ; $a$; 2"),
            ["SELECT $a$ $b$a$ ;", "$a$; 2"]
        );
        assert_eq!(
            texts("SELECT $ab$ $xab$ ; $ab$; 2"),
            ["SELECT $ab$ $xab$ ; $ab$;", "2"]
        );
    }

    #[test]
    fn skip_comments() {
        assert_eq!(skip_sql_comments("\x0b -- a\n SELECT"), Some(8));
        assert_eq!(skip_sql_comments("\x0b-- a"), None);
        assert_eq!(skip_sql_comments(" \n "), None);
    }

    #[test]
    fn variable_pieces() {
        use SqlPiece::{Text, Var};
        let t = |s: &str| Text(s.to_string());
        let v = |s: &str| Var(s.to_string());
        assert_eq!(
            split_variables("SELECT :a, :b_1::int"),
            [t("SELECT "), v("a"), t(", "), v("b_1"), t("::int")]
        );
        assert_eq!(split_variables(":::x :1 :"), [t(":::x :1 :")]);
        assert_eq!(
            split_variables("':x'/*:y*/"),
            [t("'"), v("x"), t("'/*"), v("y"), t("*/")]
        );
        assert_eq!(split_variables(":é1x"), [v("é1x")]);
        assert_eq!(split_variables(""), Vec::<SqlPiece>::new());
    }
}
