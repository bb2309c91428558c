//! A statement's shape: its tokens with every constant and parameter as `?`, by which
//! the top statements of `pg_stat_statements` are matched to the run's own scripts.
//! The server keeps a statement's text with its constants as `$1`, `$2`, ... (a
//! utility statement's, such as `ALTER ROLE ... PASSWORD '...'`, verbatim); a
//! script's command, as pgbench-rs sends it in extended mode, has its variables as
//! `$1`, ... and its own constants as written. Both come out the same here: what
//! pgbench sends in simple mode (the variables' values as literals) too, unless a
//! variable makes up part of a name.

/// One statement of a script's command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shape {
    pub tokens: Vec<String>,
    /// Its text as the script has it (variables as `$1`, ...).
    pub text: String,
}

/// The constant every literal, parameter and `TRUE`/`FALSE`/`NULL` becomes (the server
/// keeps these keywords as `$n` too).
const CONSTANT: &str = "?";

/// The statements of `sql` (split at `;`), with their shapes.
pub fn shapes(sql: &str) -> Vec<Shape> {
    let mut out = Vec::new();
    let mut tokens: Vec<String> = Vec::new();
    let mut span: Option<(usize, usize)> = None;
    let mut flush = |tokens: &mut Vec<String>, span: &mut Option<(usize, usize)>| {
        if let Some((from, to)) = span.take() {
            out.push(Shape {
                tokens: unsigned(std::mem::take(tokens)),
                text: sql[from..to].to_string(),
            });
        }
    };
    for (token, from, to) in lex(sql) {
        if token == ";" {
            flush(&mut tokens, &mut span);
            continue;
        }
        span = Some((span.map_or(from, |s| s.0), to));
        tokens.push(token);
    }
    flush(&mut tokens, &mut span);
    out
}

/// Keywords after which a sign is a constant's own (`WHERE -5 < x`), as after an
/// operator, `(` or `,`.
const BEFORE_EXPRESSION: &[&str] = &[
    "select",
    "where",
    "and",
    "or",
    "not",
    "then",
    "else",
    "when",
    "values",
    "by",
    "in",
    "between",
    "limit",
    "offset",
    "having",
    "on",
    "return",
    "returning",
    "set",
    "case",
];

/// Without a unary sign before a constant: the server takes `-5` as one constant (but
/// `a - 5` as an operator and a constant).
fn unsigned(tokens: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(tokens.len());
    for t in tokens {
        let n = out.len();
        if t == CONSTANT && n > 0 && (out[n - 1] == "-" || out[n - 1] == "+") {
            let unary = n < 2 || {
                let before = out[n - 2].as_str();
                let operand = before == CONSTANT
                    || before == ")"
                    || before == "]"
                    || before.starts_with('"')
                    || before.starts_with(is_ident_start);
                !operand || BEFORE_EXPRESSION.contains(&before)
            };
            if unary {
                out.pop();
            }
        }
        out.push(t);
    }
    out
}

fn is_ident_start(c: char) -> bool {
    c.is_alphabetic() || c == '_' || !c.is_ascii()
}

fn is_ident_char(c: char) -> bool {
    is_ident_start(c) || c.is_ascii_digit() || c == '$'
}

/// The tokens of `sql` with their byte ranges; comments and white space left out.
fn lex(sql: &str) -> Vec<(String, usize, usize)> {
    let chars: Vec<(usize, char)> = sql.char_indices().collect();
    let at = |i: usize| chars.get(i).map(|c| c.1);
    let offset = |i: usize| chars.get(i).map_or(sql.len(), |c| c.0);
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(c) = at(i) {
        let start = i;
        let token: Option<String> = if c.is_whitespace() {
            i += 1;
            None
        } else if c == '-' && at(i + 1) == Some('-') {
            while at(i).is_some_and(|c| c != '\n') {
                i += 1;
            }
            None
        } else if c == '/' && at(i + 1) == Some('*') {
            i = block_comment_end(&chars, i);
            None
        } else if c == '\'' {
            i = string_end(&chars, i, false);
            Some(CONSTANT.into())
        } else if c == '"' {
            i += 1;
            while let Some(c) = at(i) {
                i += 1;
                if c == '"' {
                    if at(i) == Some('"') {
                        i += 1;
                    } else {
                        break;
                    }
                }
            }
            Some(sql[offset(start)..offset(i)].to_string())
        } else if c == '$' {
            i = dollar_end(&chars, i);
            Some(CONSTANT.into())
        } else if c.is_ascii_digit() || (c == '.' && at(i + 1).is_some_and(|d| d.is_ascii_digit()))
        {
            i = number_end(&chars, i);
            Some(CONSTANT.into())
        } else if is_ident_start(c) {
            while at(i).is_some_and(is_ident_char) {
                i += 1;
            }
            let word = sql[offset(start)..offset(i)].to_lowercase();
            // E'...', B'...', X'...', N'...': one constant.
            if at(i) == Some('\'') && matches!(word.as_str(), "e" | "b" | "x" | "n") {
                i = string_end(&chars, i, word == "e");
                Some(CONSTANT.into())
            } else if matches!(word.as_str(), "true" | "false" | "null") {
                Some(CONSTANT.into())
            } else {
                Some(word)
            }
        } else if c == ':' && at(i + 1) == Some(':') {
            i += 2;
            Some("::".into())
        } else {
            i += 1;
            Some(c.to_string())
        };
        if let Some(t) = token {
            out.push((t, offset(start), offset(i)));
        }
    }
    out
}

/// After a `/* ... */` comment (nested, as PostgreSQL's are) starting at `i`.
fn block_comment_end(chars: &[(usize, char)], mut i: usize) -> usize {
    let at = |i: usize| chars.get(i).map(|c| c.1);
    let mut depth = 0;
    while let Some(c) = at(i) {
        if c == '/' && at(i + 1) == Some('*') {
            depth += 1;
            i += 2;
        } else if c == '*' && at(i + 1) == Some('/') {
            depth -= 1;
            i += 2;
            if depth == 0 {
                break;
            }
        } else {
            i += 1;
        }
    }
    i
}

/// After a string literal whose quote is at `i` (`''` doubles a quote; with
/// `backslashes`, `\` escapes the next character).
fn string_end(chars: &[(usize, char)], mut i: usize, backslashes: bool) -> usize {
    let at = |i: usize| chars.get(i).map(|c| c.1);
    i += 1;
    while let Some(c) = at(i) {
        i += 1;
        if backslashes && c == '\\' {
            i += 1;
        } else if c == '\'' {
            if at(i) == Some('\'') {
                i += 1;
            } else {
                break;
            }
        }
    }
    i
}

/// After `$n` or a dollar-quoted string (`$tag$...$tag$`) starting at `i`.
fn dollar_end(chars: &[(usize, char)], i: usize) -> usize {
    let at = |i: usize| chars.get(i).map(|c| c.1);
    let mut j = i + 1;
    if at(j).is_some_and(|c| c.is_ascii_digit()) {
        while at(j).is_some_and(|c| c.is_ascii_digit()) {
            j += 1;
        }
        return j;
    }
    while at(j).is_some_and(|c| is_ident_char(c) && c != '$') {
        j += 1;
    }
    if at(j) != Some('$') {
        return i + 1;
    }
    let tag: Vec<char> = chars[i..=j].iter().map(|c| c.1).collect();
    let mut k = j + 1;
    while k < chars.len() {
        if chars[k..]
            .iter()
            .map(|c| c.1)
            .take(tag.len())
            .eq(tag.iter().copied())
        {
            return k + tag.len();
        }
        k += 1;
    }
    chars.len()
}

/// After a number (digits, a fraction, an exponent) starting at `i`.
fn number_end(chars: &[(usize, char)], mut i: usize) -> usize {
    let at = |i: usize| chars.get(i).map(|c| c.1);
    while at(i).is_some_and(|c| c.is_ascii_digit() || c == '.' || c == '_') {
        i += 1;
    }
    if at(i).is_some_and(|c| c == 'e' || c == 'E') {
        let sign = usize::from(at(i + 1).is_some_and(|c| c == '+' || c == '-'));
        if at(i + 1 + sign).is_some_and(|c| c.is_ascii_digit()) {
            i += 1 + sign;
            while at(i).is_some_and(|c| c.is_ascii_digit()) {
                i += 1;
            }
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(sql: &str) -> Vec<String> {
        let s = shapes(sql);
        assert_eq!(s.len(), 1, "{sql}: {s:?}");
        s[0].tokens.clone()
    }

    #[test]
    fn the_server_s_text_and_the_script_s_have_one_shape() {
        // What PostgreSQL 15's pg_stat_statements kept for a statement sent in simple
        // mode, against the script's command.
        let server = "/* hello */ select $1 + $2, $3, $4, interval $5, array[$6,$7], $8::text, $9 in ($10,$11)";
        let script =
            "select 1 + :a, 'abc', -5, interval '1 day', array[1,2], E'x\\'y'::text, true in (null, $$d$$)";
        let script = script.replace(":a", "$1");
        assert_eq!(one(server), one(&script));
        assert_eq!(
            one("UPDATE pgbench_accounts SET abalance = abalance + $1 WHERE aid = $2;"),
            one("update  pgbench_accounts\n  SET abalance = abalance + -5000 -- delta\n WHERE aid = 123")
        );
        // A utility statement: the server's text is verbatim, so is ours.
        assert_eq!(
            one("alter role victim password 'Leaky_Secret_42'"),
            one("ALTER ROLE victim PASSWORD $1")
        );
        assert_ne!(one("select a from t"), one("select b from t"));
        assert_ne!(one("select a - 1"), one("select a + 1"));
        assert_eq!(
            one("select -1, a - 1 where -2 < a"),
            one("select $1, a - $2 where $3 < a")
        );
        assert_ne!(one("select \"A\" from t"), one("select \"a\" from t"));
        assert_eq!(
            one("select 1.5e3, .5, 1e-3, x::int"),
            one("select $1, $2, $3, x::int")
        );
    }

    #[test]
    fn a_command_of_several_statements_gives_each_its_text() {
        let s = shapes("BEGIN; /* c; */ SELECT ';' ;\nEND;");
        let texts: Vec<&str> = s.iter().map(|s| s.text.as_str()).collect();
        assert_eq!(texts, ["BEGIN", "SELECT ';'", "END"]);
        assert_eq!(s[1].tokens, ["select", "?"]);
    }
}
