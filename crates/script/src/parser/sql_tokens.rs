//! Where each kind of SQL token ends, by psqlscan.l's rules: comments, quoted
//! literals and identifiers (with quote continuation), dollar quotes and parameters,
//! numbers and the identifiers glued to them, and the tokens that start with `:`.
//! Pure functions of the script's bytes; `sql`'s scanner decides what they mean.

/// Lexer states of psqlscan.l that matter for framing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Quote {
    /// `'...'` with standard strings, `B'...'`, `X'...'`, `U&'...'`: only `'` ends it.
    Plain,
    /// `E'...'`: a backslash escapes the next byte.
    Escape,
}

pub(super) fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

pub(super) fn is_ident_cont(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit() || b == b'$'
}

pub(super) fn is_variable_char(b: u8) -> bool {
    is_ident_start(b) || b.is_ascii_digit()
}

/// psqlscan.l's `{space}`: the whitespace that separates SQL tokens.
pub(super) fn is_sql_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// The byte at `i`, or 0 past the end (psqlscan.l's rules never match a NUL).
fn at(text: &[u8], i: usize) -> u8 {
    text.get(i).copied().unwrap_or(0)
}

/// End of a single-quoted literal whose body starts at `body`.
pub(super) fn quoted_end(text: &[u8], body: usize, kind: Quote) -> usize {
    let mut i = body;
    let end = loop {
        if i >= text.len() {
            break text.len();
        }
        match text[i] {
            b'\\' if kind == Quote::Escape => i += 2,
            b'\'' if at(text, i + 1) == b'\'' => i += 2,
            b'\'' => match quote_continuation(text, i + 1) {
                // 'foo' <newline> 'bar' is one literal, in the same kind of quote
                Some(next) => i = next,
                None => break i + 1,
            },
            _ => i += 1,
        }
    };
    end.min(text.len())
}

/// End of a double-quoted identifier whose body starts at `body`.
pub(super) fn double_quoted_end(text: &[u8], body: usize) -> usize {
    let mut i = body;
    loop {
        if i >= text.len() {
            return text.len();
        }
        if text[i] == b'"' {
            if at(text, i + 1) == b'"' {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
}

/// End of the token at a `$`: a dollar quote `$tag$...$tag$`, a parameter `$1`
/// (with any identifier glued to it), or a lone `$` (an identifier after it is
/// scanned, and counted, as one).
pub(super) fn dollar_end(text: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    if i < text.len() && is_ident_start(text[i]) {
        while i < text.len() && is_variable_char(text[i]) {
            i += 1;
        }
    }
    if at(text, i) == b'$' && i < text.len() {
        let tag = &text[start..=i];
        let body = i + 1;
        return text[body..]
            .windows(tag.len())
            .position(|w| w == tag)
            .map_or(text.len(), |n| body + n + tag.len());
    }
    let mut end = start + 1;
    while end < text.len() && text[end].is_ascii_digit() {
        end += 1;
    }
    if end > start + 1 {
        end = junk_end(text, end);
    }
    end
}

/// End of a `--` comment: the next `\n` or `\r` (not included).
pub(super) fn line_end(text: &[u8], start: usize) -> usize {
    text[start..]
        .iter()
        .position(|&c| c == b'\n' || c == b'\r')
        .map_or(text.len(), |n| start + n)
}

/// End of a nested C comment whose body starts at `from`.
pub(super) fn c_comment_end(text: &[u8], from: usize) -> usize {
    let mut depth = 0usize;
    let mut i = from;
    while i < text.len() {
        if text[i] == b'/' && at(text, i + 1) == b'*' {
            depth += 1;
            i += 2;
        } else if text[i] == b'*' && at(text, i + 1) == b'/' {
            i += 2;
            if depth == 0 {
                return i;
            }
            depth -= 1;
        } else {
            i += 1;
        }
    }
    text.len()
}

/// psqlscan.l's `{quotecontinue}` after a closing quote at `from - 1`: whitespace
/// containing a newline, then a quote. Returns the offset after that quote.
fn quote_continuation(text: &[u8], from: usize) -> Option<usize> {
    let mut i = from;
    let mut newline = false;
    // {horiz_whitespace}*: spaces, tabs, form feeds and `--` comments
    loop {
        match at(text, i) {
            b' ' | b'\t' | b'\x0c' => i += 1,
            b'-' if at(text, i + 1) == b'-' => i = line_end(text, i),
            _ => break,
        }
    }
    if matches!(at(text, i), b'\n' | b'\r') && i < text.len() {
        newline = true;
        i += 1;
    }
    if !newline {
        return None;
    }
    // {special_whitespace}*: any space, or a `--` comment followed by a newline
    loop {
        match at(text, i) {
            c if is_sql_space(c) && i < text.len() => i += 1,
            b'-' if at(text, i + 1) == b'-' => {
                let end = line_end(text, i);
                if end < text.len() {
                    i = end + 1;
                } else {
                    return None;
                }
            }
            _ => break,
        }
    }
    (at(text, i) == b'\'' && i < text.len()).then_some(i + 1)
}

/// End of the token starting with `:`: `::`, `:name`, `:'name'`, `:"name"`,
/// `:{?name}` or a lone colon. psql variables are never expanded by pgbench (they
/// are copied as written), but the quote in `:'name'` does not start a literal.
pub(super) fn colon_token_end(text: &[u8], start: usize) -> usize {
    let run = |from: usize| {
        let mut i = from;
        while i < text.len() && is_variable_char(text[i]) {
            i += 1;
        }
        i
    };
    match at(text, start + 1) {
        b':' if start + 1 < text.len() => start + 2,
        q @ (b'\'' | b'"') => {
            let end = run(start + 2);
            if end > start + 2 && at(text, end) == q && end < text.len() {
                end + 1
            } else {
                start + 1
            }
        }
        b'{' if at(text, start + 2) == b'?' => {
            let end = run(start + 3);
            if end > start + 3 && at(text, end) == b'}' && end < text.len() {
                end + 1
            } else {
                start + 1
            }
        }
        c if is_variable_char(c) && start + 1 < text.len() => run(start + 1),
        _ => start + 1,
    }
}

/// End of a numeric token: `{integer}`, `{decimal}` or `{real}` (keeping `1..2` out
/// of it), a `{realfail}` such as `1e-`, and in all cases any identifier glued to it
/// (`{integer_junk}` etc., PostgreSQL 15's "trailing junk after numeric literal",
/// which psql copies as one token: the `e` of `.5e'x'` is no E-string prefix).
pub(super) fn number_end(text: &[u8], start: usize) -> usize {
    let digits = |mut i: usize| {
        while i < text.len() && text[i].is_ascii_digit() {
            i += 1;
        }
        i
    };
    let mut i = digits(start);
    if at(text, i) == b'.' && at(text, i + 1) != b'.' && i < text.len() {
        i = digits(i + 1);
    }
    if matches!(at(text, i), b'e' | b'E') {
        let sign = usize::from(matches!(at(text, i + 1), b'+' | b'-'));
        if at(text, i + 1 + sign).is_ascii_digit() && i + 1 + sign < text.len() {
            i = digits(i + 1 + sign);
        } else if sign == 1 {
            return i + 2;
        }
    }
    junk_end(text, i)
}

/// Identifier characters glued to the end of a number or parameter.
pub(super) fn junk_end(text: &[u8], mut i: usize) -> usize {
    if i < text.len() && is_ident_start(text[i]) {
        while i < text.len() && is_ident_cont(text[i]) {
            i += 1;
        }
    }
    i
}
