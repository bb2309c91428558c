//! The lexer of exprscan.l's EXPR state, token for token: flex's longest match,
//! case-insensitive keywords, `9223372036854775808` as a token of its own, and the
//! constant range checks of `strtoint64()` / `strtodouble()`.

use crate::cnum;
use crate::error::SyntaxMessage;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tok {
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Eq,
    Ne,
    Le,
    Ge,
    LShift,
    RShift,
    Lt,
    Gt,
    BitOr,
    BitAnd,
    Hash,
    Tilde,
    LParen,
    RParen,
    Comma,
    And,
    Or,
    Not,
    Is,
    IsNull,
    NotNull,
    Case,
    When,
    Then,
    Else,
    KwEnd,
    True,
    False,
    Null,
    Variable,
    Integer,
    MaxInt,
    Double,
    Function,
    /// The newline ending the command, or the end of the script.
    EndOfLine,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Token {
    pub kind: Tok,
    pub start: usize,
    pub end: usize,
}

#[derive(Debug)]
pub(super) struct LexError {
    pub message: SyntaxMessage,
    pub text: String,
    pub end: usize,
}

pub(super) struct Lexed {
    /// Ends with the `EndOfLine` token.
    pub tokens: Vec<Token>,
    pub last_error: Option<LexError>,
    /// Offset after the newline that ends the line (or the end of the script).
    pub line_end: usize,
}

const KEYWORDS: &[(&str, Tok)] = &[
    ("and", Tok::And),
    ("or", Tok::Or),
    ("not", Tok::Not),
    ("is", Tok::Is),
    ("isnull", Tok::IsNull),
    ("notnull", Tok::NotNull),
    ("case", Tok::Case),
    ("when", Tok::When),
    ("then", Tok::Then),
    ("else", Tok::Else),
    ("end", Tok::KwEnd),
    ("true", Tok::True),
    ("false", Tok::False),
    ("null", Tok::Null),
];

fn is_alpha(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b >= 0x80
}

fn is_alnum(b: u8) -> bool {
    is_alpha(b) || b.is_ascii_digit()
}

/// Lex the logical line starting at `from` as exprscan.l's EXPR state does.
pub(super) fn lex(src: &[u8], from: usize) -> Lexed {
    let mut tokens = Vec::new();
    let mut last_error = None;
    let mut i = skip_blanks(src, from);
    // ends at the newline that ends the line, or at the end of the script
    while i < src.len() && src[i] != b'\n' {
        let start = i;
        let kind = if let Some((kind, len)) = operator(src, i) {
            i += len;
            Some(kind)
        } else if src[i] == b':' && at(src, i + 1).is_some_and(is_alnum) {
            i = run(src, i + 1, is_alnum);
            Some(Tok::Variable)
        } else if src[i].is_ascii_digit()
            || (src[i] == b'.' && at(src, i + 1).is_some_and(|c| c.is_ascii_digit()))
        {
            let (kind, end, overflow) = number(src, i);
            i = end;
            if let Some(message) = overflow {
                last_error = Some(LexError {
                    message,
                    text: String::from_utf8_lossy(&src[start..i]).into_owned(),
                    end: i,
                });
            }
            Some(kind)
        } else if is_alpha(src[i]) {
            i = run(src, i, is_alnum);
            let word = &src[start..i];
            Some(
                KEYWORDS
                    .iter()
                    .find(|(kw, _)| word.eq_ignore_ascii_case(kw.as_bytes()))
                    .map_or(Tok::Function, |&(_, kind)| kind),
            )
        } else {
            // any other single byte (all bytes >= 0x80 are letters, so this is ASCII)
            i += 1;
            last_error = Some(LexError {
                message: SyntaxMessage::UnexpectedCharacter,
                text: String::from_utf8_lossy(&src[start..i]).into_owned(),
                end: i,
            });
            None
        };
        if let Some(kind) = kind {
            tokens.push(Token {
                kind,
                start,
                end: i,
            });
        }
        i = skip_blanks(src, i);
    }
    let line_end = (i + 1).min(src.len());
    tokens.push(Token {
        kind: Tok::EndOfLine,
        start: i,
        end: line_end,
    });
    Lexed {
        tokens,
        last_error,
        line_end,
    }
}

fn at(src: &[u8], i: usize) -> Option<u8> {
    src.get(i).copied()
}

/// The offset after the bytes from `i` that satisfy `pred`.
fn run(src: &[u8], mut i: usize, pred: fn(u8) -> bool) -> usize {
    while i < src.len() && pred(src[i]) {
        i += 1;
    }
    i
}

/// `{space}+` and `{continuation}` are skipped.
fn skip_blanks(src: &[u8], mut i: usize) -> usize {
    loop {
        match (at(src, i), at(src, i + 1), at(src, i + 2)) {
            (Some(b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b'), _, _) => i += 1,
            (Some(b'\\'), Some(b'\n'), _) => i += 2,
            (Some(b'\\'), Some(b'\r'), Some(b'\n')) => i += 3,
            _ => return i,
        }
    }
}

/// An operator or punctuation token at `i`, and its length (flex's longest match).
fn operator(src: &[u8], i: usize) -> Option<(Tok, usize)> {
    let next = at(src, i + 1);
    Some(match src[i] {
        b'+' => (Tok::Plus, 1),
        b'-' => (Tok::Minus, 1),
        b'*' => (Tok::Star, 1),
        b'/' => (Tok::Slash, 1),
        b'%' => (Tok::Percent, 1),
        b'=' => (Tok::Eq, 1),
        b'<' => match next {
            Some(b'>') => (Tok::Ne, 2),
            Some(b'=') => (Tok::Le, 2),
            Some(b'<') => (Tok::LShift, 2),
            _ => (Tok::Lt, 1),
        },
        b'>' => match next {
            Some(b'=') => (Tok::Ge, 2),
            Some(b'>') => (Tok::RShift, 2),
            _ => (Tok::Gt, 1),
        },
        b'!' if next == Some(b'=') => (Tok::Ne, 2),
        b'|' => (Tok::BitOr, 1),
        b'&' => (Tok::BitAnd, 1),
        b'#' => (Tok::Hash, 1),
        b'~' => (Tok::Tilde, 1),
        b'(' => (Tok::LParen, 1),
        b')' => (Tok::RParen, 1),
        b',' => (Tok::Comma, 1),
        _ => return None,
    })
}

/// A numeric constant at `start` (a digit, or `.` and a digit): its kind, its end, and
/// the overflow flex reports for it. "12" is an integer, "12." / "1e5" / ".5" are
/// doubles, and 9223372036854775808 is a token of its own.
fn number(src: &[u8], start: usize) -> (Tok, usize, Option<SyntaxMessage>) {
    let digit = |c: u8| c.is_ascii_digit();
    let mut double = src[start] == b'.';
    let mut i = run(src, start, digit);
    if at(src, i) == Some(b'.') {
        double = true;
        i = run(src, i + 1, digit);
    }
    if matches!(at(src, i), Some(b'e' | b'E')) {
        let sign = usize::from(matches!(at(src, i + 1), Some(b'+' | b'-')));
        if at(src, i + 1 + sign).is_some_and(digit) {
            double = true;
            i = run(src, i + 1 + sign, digit);
        }
    }
    let text = &src[start..i];
    if double {
        let overflow = parse_double(text).is_none();
        (
            Tok::Double,
            i,
            overflow.then_some(SyntaxMessage::DoubleConstantOverflow),
        )
    } else if text == b"9223372036854775808" {
        (Tok::MaxInt, i, None)
    } else {
        let overflow = parse_int(text).is_none();
        (
            Tok::Integer,
            i,
            overflow.then_some(SyntaxMessage::BigintConstantOverflow),
        )
    }
}

/// `strtoint64()` on a run of digits: `None` when beyond the bigint range.
fn parse_int(digits: &[u8]) -> Option<i64> {
    cnum::strtoint64(std::str::from_utf8(digits).ok()?).ok()
}

/// `strtodouble()`: `None` where `strtod` sets `ERANGE`, i.e. on overflow and on
/// underflow (a non-zero constant that comes out as zero or subnormal).
fn parse_double(text: &[u8]) -> Option<f64> {
    cnum::strtod(std::str::from_utf8(text).ok()?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<Tok> {
        lex(src.as_bytes(), 0)
            .tokens
            .iter()
            .map(|t| t.kind)
            .collect()
    }

    #[test]
    fn lexer_takes_the_longest_match() {
        use Tok::*;
        assert_eq!(
            kinds("12 12. 1e5 .5 1.5e"),
            [Integer, Double, Double, Double, Double, Function, EndOfLine]
        );
        assert_eq!(
            kinds("9223372036854775808 9223372036854775808.0"),
            [MaxInt, Double, EndOfLine]
        );
        assert_eq!(
            kinds("android AND nOtNuLl not"),
            [Function, And, NotNull, Not, EndOfLine]
        );
        assert_eq!(
            kinds("<> <= << < >= >> > != <<<"),
            [Ne, Le, LShift, Lt, Ge, RShift, Gt, Ne, LShift, Lt, EndOfLine]
        );
        assert_eq!(
            kinds(":x1 :1x \\\n 1\n2"),
            [Variable, Variable, Integer, EndOfLine]
        );
    }

    #[test]
    fn lexer_errors_keep_the_last_one() {
        let lexed = lex(b"1 @ 99999999999999999999 $\nrest", 0);
        let error = lexed.last_error.expect("error");
        assert_eq!(
            (error.message, error.text.as_str(), error.end),
            (SyntaxMessage::UnexpectedCharacter, "$", 26)
        );
        assert_eq!(lexed.line_end, 27);
    }

    #[test]
    fn double_range() {
        assert_eq!(parse_double(b"1e308"), Some(1e308));
        assert_eq!(parse_double(b"0e-400"), Some(0.0));
        assert_eq!(parse_double(b"1.8e308"), None);
        assert_eq!(parse_double(b"1e-310"), None);
        assert_eq!(
            parse_double(b"2.2250738585072014e-308"),
            Some(2.2250738585072014e-308)
        );
        assert_eq!(parse_double(b"1."), Some(1.0));
        assert_eq!(parse_double(b"1.e2"), Some(100.0));
    }

    #[test]
    fn int_range() {
        assert_eq!(parse_int(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int(b"0009223372036854775807"), Some(i64::MAX));
        assert_eq!(parse_int(b"9223372036854775809"), None);
    }
}
