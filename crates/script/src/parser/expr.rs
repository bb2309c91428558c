//! Expressions of `\set`, `\if` and `\elif`: pgbench's `exprscan.l` (EXPR state) and
//! `exprparse.y`, compiled to [`ast::Expr`] the way `exprparse.y` builds its nodes.
//!
//! Parsing happens in three steps, so that every error is the one bison and flex report,
//! at the same column:
//! 1. a flex-equivalent lexer reads the whole logical line. flex raises its errors
//!    (`unexpected character`, constant overflows) as tokens are read and, while
//!    reporting any error, reads the rest of the line, so the last lexer error of a line
//!    always wins;
//! 2. the pest grammar (`script.pest`) checks the operator/operand structure; its failure
//!    position is the token bison stops at. What bison rejects beyond that structure
//!    (a second comparison in a non-associative chain, `9223372036854775808` not right
//!    after a unary minus) is found on the token stream, and unknown function names and
//!    wrong argument counts, which bison reports as soon as the name or `)` is shifted;
//! 3. pest's Pratt parser folds the operators with exprparse.y's precedence table.
//!
//! bison's own limit is replayed too: its stack holds 10000 states, and an expression
//! nested deeper fails with `memory exhausted` at the token where the stack fills up.
//! Deep expressions (which stock accepts up to that limit) are parsed on a thread whose
//! stack is sized for them, since pest and the tree builder recurse per level.

use std::sync::LazyLock;

use pest::error::InputLocation;
use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, Op, PrattParser};
use pest::Parser;

use super::{Grammar, Rule};
use crate::ast::{Expr, Func, Value};
use crate::error::{ScriptError, SyntaxError, SyntaxMessage};

/// Where an expression sits, for error messages.
pub(crate) struct ExprSite<'a> {
    pub source: &'a str,
    pub line_no: usize,
    /// Offset of the backslash: error columns and the printed line start there.
    pub line_start: usize,
    /// The command word as written (`set`, `if`, ...), if any.
    pub command: Option<&'a str>,
}

/// Parse the expression starting at `from` and running to the end of the logical line.
/// Returns the expression and the offset after the line's newline (or the end of `src`).
pub(crate) fn parse_expr(
    src: &str,
    from: usize,
    site: &ExprSite<'_>,
) -> Result<(Expr, usize), ScriptError> {
    let lexed = lex(src.as_bytes(), from);
    let error = |message, detail: Option<String>, token_end: usize| {
        ScriptError::from(SyntaxError {
            source: site.source.to_string(),
            line_no: site.line_no,
            line: Some(chomp(&src[site.line_start..lexed.line_end]).to_string()),
            command: site.command.map(str::to_string),
            message,
            detail,
            column: Some(token_end.saturating_sub(1).saturating_sub(site.line_start)),
        })
    };
    if let Some(e) = &lexed.last_error {
        return Err(error(e.message, Some(e.text.clone()), e.end));
    }
    let tokens = &lexed.tokens;
    let end_of_line = tokens.last().map_or(src.len(), |t| t.start);
    let stack = bison_stack(tokens);
    // pest and the tree builder recurse once per nesting level, bison does not: deep
    // expressions (stock accepts nearly 10000 levels) get a stack of their own
    let input = &src[from..end_of_line];
    let (syntax_at, expr) = if stack.max_depth > DEEP_EXPRESSION {
        // beyond bison's limit pest may give up (its stack guard) anywhere past it
        let levels = stack.max_depth.min(BISON_MAX_DEPTH + DEEP_EXPRESSION);
        with_stack(levels * STACK_PER_LEVEL, || {
            structure(input, from, tokens, &stack)
        })
    } else {
        structure(input, from, tokens, &stack)
    };
    let limit = syntax_at.unwrap_or(tokens.len());
    let exhausted = stack.exhausted_at.filter(|&at| at < limit);
    // bison reports a full stack as it pushes, before the shifted name or `)` is checked
    if let Some((at, message, detail)) = semantic_error(src, &tokens[..exhausted.unwrap_or(limit)])
    {
        return Err(error(message, Some(detail), tokens[at].end));
    }
    if let Some(at) = exhausted {
        return Err(error(SyntaxMessage::MemoryExhausted, None, tokens[at].end));
    }
    if let Some(at) = syntax_at {
        return Err(error(SyntaxMessage::SyntaxError, None, tokens[at].end));
    }
    let expr = expr.ok_or_else(|| error(SyntaxMessage::SyntaxError, None, lexed.line_end))?;
    Ok((expr, lexed.line_end))
}

/// Expressions deeper than this (in bison stack entries) are parsed on a thread with a
/// stack sized for them.
const DEEP_EXPRESSION: usize = 64;
/// Generous native stack per bison stack entry for pest and the tree builder.
const STACK_PER_LEVEL: usize = 16 * 1024;

/// Run `f` on a thread with a stack of `size` bytes (inline if no thread can be made).
fn with_stack<T: Send>(size: usize, f: impl Fn() -> T + Sync) -> T {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .stack_size(size)
            .spawn_scoped(scope, &f)
        {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => f(),
        }
    })
}

/// Steps 2 and 3: where bison would find a syntax error (as a token index), and the
/// tree when there is none and bison's stack holds. `input` is the expression text,
/// which starts at `from`.
fn structure(
    input: &str,
    from: usize,
    tokens: &[Token],
    stack: &BisonStack,
) -> (Option<usize>, Option<Expr>) {
    let parsed = Grammar::parse(Rule::expression, input);
    let syntax_at = [
        parsed.as_ref().err().map(|e| {
            let pos = from
                + match e.location {
                    InputLocation::Pos(p) => p,
                    InputLocation::Span((p, _)) => p,
                };
            tokens
                .iter()
                .position(|t| t.end > pos)
                .unwrap_or(tokens.len() - 1)
        }),
        nonassoc_violation(tokens),
        misplaced_maxint(tokens),
    ]
    .into_iter()
    .flatten()
    .min();
    if syntax_at.is_some() || stack.exhausted_at.is_some() {
        return (syntax_at, None);
    }
    let expr = parsed
        .ok()
        .and_then(|mut pairs| pairs.next())
        .and_then(|expression| expression.into_inner().next())
        .and_then(|expr| build(expr).ok())
        .map(|operand| operand.expr);
    (None, expr)
}

/// `expr_scanner_get_substring(..., chomp = true)`: drop trailing newlines.
pub(crate) fn chomp(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r'])
}

// ----------------------------------------------------------------------------------------
// Lexer

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
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
struct Token {
    kind: Tok,
    start: usize,
    end: usize,
}

#[derive(Debug)]
struct LexError {
    message: SyntaxMessage,
    text: String,
    end: usize,
}

struct Lexed {
    /// Ends with the `EndOfLine` token.
    tokens: Vec<Token>,
    last_error: Option<LexError>,
    /// Offset after the newline that ends the line (or the end of the script).
    line_end: usize,
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
fn lex(src: &[u8], from: usize) -> Lexed {
    let at = |i: usize| src.get(i).copied().unwrap_or(0);
    let run = |mut i: usize, pred: fn(u8) -> bool| {
        while i < src.len() && pred(src[i]) {
            i += 1;
        }
        i
    };
    let mut tokens = Vec::new();
    let mut last_error = None;
    let mut i = from;
    loop {
        // {space}+ and {continuation} are skipped
        loop {
            match at(i) {
                b' ' | b'\t' | b'\r' | b'\x0c' | b'\x0b' => i += 1,
                b'\\' if at(i + 1) == b'\n' => i += 2,
                b'\\' if at(i + 1) == b'\r' && at(i + 2) == b'\n' => i += 3,
                _ => break,
            }
        }
        if i >= src.len() {
            tokens.push(Token {
                kind: Tok::EndOfLine,
                start: src.len(),
                end: src.len(),
            });
            return Lexed {
                tokens,
                last_error,
                line_end: src.len(),
            };
        }
        let start = i;
        let b = src[i];
        let simple = match b {
            b'\n' => {
                tokens.push(Token {
                    kind: Tok::EndOfLine,
                    start,
                    end: start + 1,
                });
                return Lexed {
                    tokens,
                    last_error,
                    line_end: start + 1,
                };
            }
            b'+' => Some((Tok::Plus, 1)),
            b'-' => Some((Tok::Minus, 1)),
            b'*' => Some((Tok::Star, 1)),
            b'/' => Some((Tok::Slash, 1)),
            b'%' => Some((Tok::Percent, 1)),
            b'=' => Some((Tok::Eq, 1)),
            b'<' => Some(match at(i + 1) {
                b'>' => (Tok::Ne, 2),
                b'=' => (Tok::Le, 2),
                b'<' => (Tok::LShift, 2),
                _ => (Tok::Lt, 1),
            }),
            b'>' => Some(match at(i + 1) {
                b'=' => (Tok::Ge, 2),
                b'>' => (Tok::RShift, 2),
                _ => (Tok::Gt, 1),
            }),
            b'!' if at(i + 1) == b'=' => Some((Tok::Ne, 2)),
            b'|' => Some((Tok::BitOr, 1)),
            b'&' => Some((Tok::BitAnd, 1)),
            b'#' => Some((Tok::Hash, 1)),
            b'~' => Some((Tok::Tilde, 1)),
            b'(' => Some((Tok::LParen, 1)),
            b')' => Some((Tok::RParen, 1)),
            b',' => Some((Tok::Comma, 1)),
            _ => None,
        };
        if let Some((kind, len)) = simple {
            i += len;
            tokens.push(Token {
                kind,
                start,
                end: i,
            });
            continue;
        }
        let kind = if b == b':' && is_alnum(at(i + 1)) {
            i = run(i + 1, is_alnum);
            Tok::Variable
        } else if b.is_ascii_digit() || (b == b'.' && at(i + 1).is_ascii_digit()) {
            let mut double = b == b'.';
            i = run(i, |c| c.is_ascii_digit());
            if at(i) == b'.' {
                double = true;
                i = run(i + 1, |c| c.is_ascii_digit());
            }
            if matches!(at(i), b'e' | b'E') {
                let sign = usize::from(matches!(at(i + 1), b'+' | b'-'));
                if at(i + 1 + sign).is_ascii_digit() {
                    double = true;
                    i = run(i + 1 + sign, |c| c.is_ascii_digit());
                }
            }
            let text = &src[start..i];
            let (kind, overflow) = if double {
                (
                    Tok::Double,
                    parse_double(text)
                        .is_none()
                        .then_some(SyntaxMessage::DoubleConstantOverflow),
                )
            } else if text == b"9223372036854775808" {
                (Tok::MaxInt, None)
            } else {
                (
                    Tok::Integer,
                    parse_int(text)
                        .is_none()
                        .then_some(SyntaxMessage::BigintConstantOverflow),
                )
            };
            if let Some(message) = overflow {
                last_error = Some(LexError {
                    message,
                    text: String::from_utf8_lossy(text).into_owned(),
                    end: i,
                });
            }
            kind
        } else if is_alpha(b) {
            i = run(i, is_alnum);
            let word = &src[start..i];
            KEYWORDS
                .iter()
                .find(|(kw, _)| word.eq_ignore_ascii_case(kw.as_bytes()))
                .map_or(Tok::Function, |&(_, kind)| kind)
        } else {
            // any other single byte (all bytes >= 0x80 are letters, so this is ASCII)
            i += 1;
            last_error = Some(LexError {
                message: SyntaxMessage::UnexpectedCharacter,
                text: String::from_utf8_lossy(&src[start..i]).into_owned(),
                end: i,
            });
            continue;
        };
        tokens.push(Token {
            kind,
            start,
            end: i,
        });
    }
}

/// `strtoint64()` on a run of digits: `None` when beyond the bigint range.
fn parse_int(digits: &[u8]) -> Option<i64> {
    digits.iter().try_fold(0i64, |acc, &d| {
        acc.checked_mul(10)?.checked_add(i64::from(d - b'0'))
    })
}

/// `strtodouble()`: `None` where `strtod` sets `ERANGE`, i.e. on overflow and on
/// underflow (a non-zero constant that comes out as zero or subnormal).
fn parse_double(text: &[u8]) -> Option<f64> {
    let value: f64 = std::str::from_utf8(text).ok()?.parse().ok()?;
    let mantissa_nonzero = text
        .iter()
        .take_while(|&&c| c != b'e' && c != b'E')
        .any(|&c| (b'1'..=b'9').contains(&c));
    let underflow = mantissa_nonzero && (value == 0.0 || value.is_subnormal());
    (value.is_finite() && !underflow).then_some(value)
}

// ----------------------------------------------------------------------------------------
// Checks bison makes beyond the operator structure

fn is_comparison(kind: Tok) -> bool {
    matches!(
        kind,
        Tok::Eq | Tok::Ne | Tok::Le | Tok::Ge | Tok::Lt | Tok::Gt
    )
}

/// `%nonassoc '<' '>' '=' LE_OP GE_OP NE_OP`: a comparison whose left operand is an
/// unparenthesised comparison is a syntax error (`1 < 2 < 3`). The first comparison is
/// closed by anything that binds looser (IS forms, AND, OR) and a NOT starts a new scope
/// (`1 < NOT 2 < 3` is `1 < NOT (2 < 3)`).
fn nonassoc_violation(tokens: &[Token]) -> Option<usize> {
    let mut outer = Vec::new();
    let mut open = false;
    for (i, token) in tokens.iter().enumerate() {
        match token.kind {
            Tok::LParen | Tok::Case => {
                outer.push(open);
                open = false;
            }
            Tok::RParen | Tok::KwEnd => open = outer.pop().unwrap_or(false),
            Tok::Comma | Tok::When | Tok::Then | Tok::Else => open = false,
            Tok::Is | Tok::IsNull | Tok::NotNull | Tok::And | Tok::Or | Tok::Not => open = false,
            kind if is_comparison(kind) => {
                if open {
                    return Some(i);
                }
                open = true;
            }
            _ => {}
        }
    }
    None
}

/// Tokens after which a `-` is binary.
fn ends_operand(kind: Tok) -> bool {
    matches!(
        kind,
        Tok::Integer
            | Tok::Double
            | Tok::MaxInt
            | Tok::Variable
            | Tok::RParen
            | Tok::KwEnd
            | Tok::Null
            | Tok::True
            | Tok::False
            | Tok::IsNull
            | Tok::NotNull
    )
}

/// `9223372036854775808` is only valid right after a unary minus.
fn misplaced_maxint(tokens: &[Token]) -> Option<usize> {
    tokens.iter().enumerate().position(|(i, t)| {
        t.kind == Tok::MaxInt
            && !(i >= 1
                && tokens[i - 1].kind == Tok::Minus
                && (i == 1 || !ends_operand(tokens[i - 2].kind)))
    })
}

/// An unknown function name (reported when the name is read) or a wrong number of
/// arguments (reported at the closing parenthesis), the first in token order.
fn semantic_error(src: &str, tokens: &[Token]) -> Option<(usize, SyntaxMessage, String)> {
    struct Paren {
        function: Option<&'static FunctionDef>,
        commas: usize,
        /// No expression before the first comma or `)` (`f()`, `f(,1)`).
        empty_first: bool,
    }
    let mut parens: Vec<Paren> = Vec::new();
    for (i, token) in tokens.iter().enumerate() {
        match token.kind {
            Tok::Function => {
                let name = &src[token.start..token.end];
                if find_function(name).is_none() {
                    return Some((i, SyntaxMessage::UnexpectedFunctionName, name.to_string()));
                }
            }
            Tok::LParen => parens.push(Paren {
                function: i
                    .checked_sub(1)
                    .filter(|&p| tokens[p].kind == Tok::Function)
                    .and_then(|p| find_function(&src[tokens[p].start..tokens[p].end])),
                commas: 0,
                empty_first: tokens
                    .get(i + 1)
                    .is_some_and(|t| matches!(t.kind, Tok::RParen | Tok::Comma)),
            }),
            Tok::Comma => {
                if let Some(paren) = parens.last_mut() {
                    paren.commas += 1;
                }
            }
            Tok::RParen => {
                let Some(paren) = parens.pop() else { continue };
                let Some(function) = paren.function else {
                    continue;
                };
                let nargs = paren.commas + 1 - usize::from(paren.empty_first);
                if let Some(message) = function.arity.check(nargs) {
                    return Some((i, message, function.name.to_string()));
                }
            }
            _ => {}
        }
    }
    None
}

/// bison's `YYMAXDEPTH`: its parser stack holds at most this many states.
const BISON_MAX_DEPTH: usize = 10_000;

/// What [`bison_stack`] found.
struct BisonStack {
    /// The token at which bison's stack overflows ("memory exhausted"), if it does.
    exhausted_at: Option<usize>,
    /// The deepest the stack gets (in states), to size the native stack for pest.
    max_depth: usize,
}

/// A symbol on bison's stack.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Sym {
    Expr,
    /// A binary operator of this precedence level, waiting for its right operand.
    Infix(u8),
    /// A prefix operator (`-`, `+`, `~`, NOT) of this level, waiting for its operand.
    Prefix(u8),
    /// `(` of a parenthesised expression.
    Group,
    /// `(` after a function name.
    Call,
    Elist,
    Comma,
    Case,
    WhenThenList,
    When,
    Then,
    Else,
    /// IS, the NOT of IS NOT, and anything else waiting for its rule to complete.
    Other,
}

/// Precedence level (exprparse.y, lowest 1) of a binary operator token.
fn binary_level(kind: Tok) -> Option<u8> {
    Some(match kind {
        Tok::Or => 1,
        Tok::And => 2,
        Tok::Is | Tok::IsNull | Tok::NotNull => 4,
        k if is_comparison(k) => 5,
        Tok::BitOr | Tok::BitAnd | Tok::Hash | Tok::LShift | Tok::RShift => 6,
        Tok::Plus | Tok::Minus => 7,
        Tok::Star | Tok::Slash | Tok::Percent => 8,
        _ => return None,
    })
}

/// Whether operators of this level are left-associative (so `a op b op` reduces).
fn left_assoc(level: u8) -> bool {
    matches!(level, 1 | 2 | 6 | 7 | 8)
}

/// Replays bison's shifts and reductions on the token stream to follow the depth of
/// its stack, which it checks at every push. Meaningful up to the first syntax error;
/// past it the replay only has to stay panic-free.
fn bison_stack(tokens: &[Token]) -> BisonStack {
    let mut stack: Vec<Sym> = Vec::new();
    let mut result = BisonStack {
        exhausted_at: None,
        max_depth: 1,
    };
    let mut push = |stack: &mut Vec<Sym>, sym: Sym, at: usize| {
        stack.push(sym);
        // the state stack holds one more entry than the symbol stack
        result.max_depth = result.max_depth.max(stack.len() + 1);
        if stack.len() + 1 >= BISON_MAX_DEPTH && result.exhausted_at.is_none() {
            result.exhausted_at = Some(at);
        }
    };
    let ends = |stack: &[Sym], tail: &[Sym]| stack.ends_with(tail);
    // reduce operators that bind tighter than a lookahead of `level` (0: a closer)
    let reduce = |stack: &mut Vec<Sym>, level: u8| loop {
        match stack[..] {
            [.., Sym::Expr, Sym::Infix(l), Sym::Expr]
                if l > level || (l == level && left_assoc(l)) =>
            {
                stack.truncate(stack.len() - 3);
                stack.push(Sym::Expr);
            }
            [.., Sym::Prefix(l), Sym::Expr] if l > level || (l == level && left_assoc(l)) => {
                stack.truncate(stack.len() - 2);
                stack.push(Sym::Expr);
            }
            _ => return,
        }
    };
    // `elist: expr | elist ',' expr` once the argument before `,` or `)` is complete
    let close_argument = |stack: &mut Vec<Sym>| {
        if ends(stack, &[Sym::Elist, Sym::Comma, Sym::Expr]) {
            stack.truncate(stack.len() - 3);
            stack.push(Sym::Elist);
        } else if ends(stack, &[Sym::Call, Sym::Expr]) {
            stack.pop();
            stack.push(Sym::Elist);
        }
    };
    let close_when = |stack: &mut Vec<Sym>| {
        if ends(
            stack,
            &[
                Sym::WhenThenList,
                Sym::When,
                Sym::Expr,
                Sym::Then,
                Sym::Expr,
            ],
        ) {
            stack.truncate(stack.len() - 5);
            stack.push(Sym::WhenThenList);
        } else if ends(stack, &[Sym::When, Sym::Expr, Sym::Then, Sym::Expr]) {
            stack.truncate(stack.len() - 4);
            stack.push(Sym::WhenThenList);
        }
    };
    let mut previous: Option<Tok> = None;
    for (at, token) in tokens.iter().enumerate() {
        let operand_before = previous.is_some_and(ends_operand);
        let after_is = matches!(previous, Some(Tok::Is))
            || (previous == Some(Tok::Not) && stack.last() == Some(&Sym::Other));
        match token.kind {
            Tok::Null | Tok::True | Tok::False if after_is => {
                // expr IS [NOT] NULL|TRUE|FALSE, reduced at once
                push(&mut stack, Sym::Other, at);
                while stack.last() == Some(&Sym::Other) {
                    stack.pop();
                }
                if stack.last() == Some(&Sym::Expr) {
                    stack.pop();
                }
                stack.push(Sym::Expr);
            }
            Tok::Not if after_is => push(&mut stack, Sym::Other, at),
            Tok::Integer | Tok::Double | Tok::Variable | Tok::Null | Tok::True | Tok::False => {
                push(&mut stack, Sym::Other, at);
                stack.pop();
                stack.push(Sym::Expr);
            }
            Tok::MaxInt => {
                // '-' MAXINT_PLUS_ONE_CONST, reduced at once
                push(&mut stack, Sym::Other, at);
                stack.pop();
                if matches!(stack.last(), Some(Sym::Prefix(_))) {
                    stack.pop();
                }
                stack.push(Sym::Expr);
            }
            Tok::Function => push(&mut stack, Sym::Other, at),
            // the function name (already on the stack) is followed by Call
            Tok::LParen if previous == Some(Tok::Function) => push(&mut stack, Sym::Call, at),
            Tok::LParen => push(&mut stack, Sym::Group, at),
            Tok::Minus | Tok::Plus if !operand_before => push(&mut stack, Sym::Prefix(9), at),
            Tok::Tilde => push(&mut stack, Sym::Prefix(6), at),
            Tok::Not => push(&mut stack, Sym::Prefix(3), at),
            Tok::Is => {
                reduce(&mut stack, 4);
                push(&mut stack, Sym::Other, at);
            }
            Tok::IsNull | Tok::NotNull => {
                reduce(&mut stack, 4);
                push(&mut stack, Sym::Other, at);
                stack.pop();
            }
            kind if binary_level(kind).is_some() => {
                let level = binary_level(kind).unwrap_or(0);
                reduce(&mut stack, level);
                push(&mut stack, Sym::Infix(level), at);
            }
            Tok::Comma => {
                reduce(&mut stack, 0);
                if stack.last() == Some(&Sym::Call) {
                    // an empty first argument: `elist: /* empty */`
                    push(&mut stack, Sym::Elist, at);
                } else {
                    close_argument(&mut stack);
                }
                push(&mut stack, Sym::Comma, at);
            }
            Tok::RParen => {
                reduce(&mut stack, 0);
                if ends(&stack, &[Sym::Group, Sym::Expr]) {
                    push(&mut stack, Sym::Other, at);
                    stack.truncate(stack.len() - 3);
                    stack.push(Sym::Expr);
                } else {
                    if stack.last() == Some(&Sym::Call) {
                        push(&mut stack, Sym::Elist, at);
                    } else {
                        close_argument(&mut stack);
                    }
                    // function '(' elist ')'
                    push(&mut stack, Sym::Other, at);
                    stack.truncate(stack.len().saturating_sub(4));
                    stack.push(Sym::Expr);
                }
            }
            Tok::Case => push(&mut stack, Sym::Case, at),
            Tok::When => {
                reduce(&mut stack, 0);
                close_when(&mut stack);
                push(&mut stack, Sym::When, at);
            }
            Tok::Then => {
                reduce(&mut stack, 0);
                push(&mut stack, Sym::Then, at);
            }
            Tok::Else => {
                reduce(&mut stack, 0);
                close_when(&mut stack);
                push(&mut stack, Sym::Else, at);
            }
            Tok::KwEnd => {
                reduce(&mut stack, 0);
                close_when(&mut stack);
                push(&mut stack, Sym::Other, at);
                let n = if ends(&stack, &[Sym::Else, Sym::Expr, Sym::Other]) {
                    5
                } else {
                    3
                };
                stack.truncate(stack.len().saturating_sub(n));
                stack.push(Sym::Expr);
            }
            _ => {}
        }
        previous = Some(token.kind);
    }
    result
}

// ----------------------------------------------------------------------------------------
// Functions (exprparse.y's PGBENCH_FUNCTIONS, those callable by name)

#[derive(Debug, Clone, Copy)]
enum Arity {
    Exact(usize),
    /// `least`, `greatest`
    AtLeastOne,
    /// `hash*(v [, seed])`
    Hash,
    /// `permute(i, size [, seed])`
    Permute,
}

impl Arity {
    fn check(self, nargs: usize) -> Option<SyntaxMessage> {
        let ok = match self {
            Arity::Exact(n) => nargs == n,
            Arity::AtLeastOne => {
                return (nargs == 0).then_some(SyntaxMessage::AtLeastOneArgumentExpected);
            }
            Arity::Hash => (1..=2).contains(&nargs),
            Arity::Permute => (2..=3).contains(&nargs),
        };
        (!ok).then_some(SyntaxMessage::UnexpectedNumberOfArguments)
    }

    /// How many arguments the call has once `:default_seed` is appended.
    fn with_default_seed(self, nargs: usize) -> bool {
        matches!((self, nargs), (Arity::Hash, 1) | (Arity::Permute, 2))
    }
}

struct FunctionDef {
    name: &'static str,
    func: Func,
    arity: Arity,
}

const FUNCTIONS: &[FunctionDef] = &[
    FunctionDef {
        name: "mod",
        func: Func::Mod,
        arity: Arity::Exact(2),
    },
    FunctionDef {
        name: "abs",
        func: Func::Abs,
        arity: Arity::Exact(1),
    },
    FunctionDef {
        name: "least",
        func: Func::Least,
        arity: Arity::AtLeastOne,
    },
    FunctionDef {
        name: "greatest",
        func: Func::Greatest,
        arity: Arity::AtLeastOne,
    },
    FunctionDef {
        name: "debug",
        func: Func::Debug,
        arity: Arity::Exact(1),
    },
    FunctionDef {
        name: "pi",
        func: Func::Pi,
        arity: Arity::Exact(0),
    },
    FunctionDef {
        name: "sqrt",
        func: Func::Sqrt,
        arity: Arity::Exact(1),
    },
    FunctionDef {
        name: "ln",
        func: Func::Ln,
        arity: Arity::Exact(1),
    },
    FunctionDef {
        name: "exp",
        func: Func::Exp,
        arity: Arity::Exact(1),
    },
    FunctionDef {
        name: "int",
        func: Func::Int,
        arity: Arity::Exact(1),
    },
    FunctionDef {
        name: "double",
        func: Func::Double,
        arity: Arity::Exact(1),
    },
    FunctionDef {
        name: "random",
        func: Func::Random,
        arity: Arity::Exact(2),
    },
    FunctionDef {
        name: "random_gaussian",
        func: Func::RandomGaussian,
        arity: Arity::Exact(3),
    },
    FunctionDef {
        name: "random_exponential",
        func: Func::RandomExponential,
        arity: Arity::Exact(3),
    },
    FunctionDef {
        name: "random_zipfian",
        func: Func::RandomZipfian,
        arity: Arity::Exact(3),
    },
    FunctionDef {
        name: "pow",
        func: Func::Pow,
        arity: Arity::Exact(2),
    },
    FunctionDef {
        name: "power",
        func: Func::Pow,
        arity: Arity::Exact(2),
    },
    FunctionDef {
        name: "hash",
        func: Func::HashMurmur2,
        arity: Arity::Hash,
    },
    FunctionDef {
        name: "hash_murmur2",
        func: Func::HashMurmur2,
        arity: Arity::Hash,
    },
    FunctionDef {
        name: "hash_fnv1a",
        func: Func::HashFnv1a,
        arity: Arity::Hash,
    },
    FunctionDef {
        name: "permute",
        func: Func::Permute,
        arity: Arity::Permute,
    },
];

/// Function names are matched without regard to (ASCII) case, like `pg_strcasecmp`.
fn find_function(name: &str) -> Option<&'static FunctionDef> {
    FUNCTIONS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

// ----------------------------------------------------------------------------------------
// Tree building

/// exprparse.y's precedence declarations, lowest first. `~` is declared at the level of
/// `| # & << >>` there (left-associative), which makes its operand swallow `+ - * / %`
/// but not the bit operators; a prefix level of its own just above them does the same
/// in a Pratt parser. Comparisons are non-associative in bison; chains are rejected
/// before folding, so `Left` here never matters.
static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(|| {
    PrattParser::new()
        .op(Op::infix(Rule::op_or, Assoc::Left))
        .op(Op::infix(Rule::op_and, Assoc::Left))
        .op(Op::prefix(Rule::not))
        .op(Op::postfix(Rule::is_test) | Op::postfix(Rule::isnull) | Op::postfix(Rule::notnull))
        .op(Op::infix(Rule::op_cmp, Assoc::Left))
        .op(Op::infix(Rule::op_bit, Assoc::Left))
        .op(Op::prefix(Rule::bitnot))
        .op(Op::infix(Rule::op_add, Assoc::Left))
        .op(Op::infix(Rule::op_mul, Assoc::Left))
        .op(Op::prefix(Rule::neg) | Op::prefix(Rule::pos))
});

/// The input broke an invariant the checks above guarantee.
#[derive(Debug)]
struct Unexpected;

/// A folded operand; `maxint` marks the bare `9223372036854775808`, which only a unary
/// minus may take.
struct Operand {
    expr: Expr,
    maxint: bool,
}

impl From<Expr> for Operand {
    fn from(expr: Expr) -> Self {
        Operand {
            expr,
            maxint: false,
        }
    }
}

fn func(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func { func, args }
}

fn constant(value: Value) -> Expr {
    Expr::Const(value)
}

/// Fold an `expr` pair.
fn build(pair: Pair<'_, Rule>) -> Result<Operand, Unexpected> {
    PRATT
        .map_primary(primary)
        .map_prefix(|op, operand| {
            let operand = operand?;
            Ok(match op.as_rule() {
                Rule::neg if operand.maxint => constant(Value::Int(i64::MIN)),
                Rule::neg => func(Func::Sub, vec![constant(Value::Int(0)), operand.expr]),
                Rule::pos => operand.expr,
                Rule::bitnot => func(Func::BitXor, vec![constant(Value::Int(-1)), operand.expr]),
                Rule::not => func(Func::Not, vec![operand.expr]),
                _ => return Err(Unexpected),
            }
            .into())
        })
        .map_postfix(|operand, op| {
            let x = operand?.expr;
            let is = |x, v| func(Func::Is, vec![x, constant(v)]);
            Ok(match op.as_rule() {
                Rule::isnull => is(x, Value::Null),
                Rule::notnull => func(Func::Not, vec![is(x, Value::Null)]),
                Rule::is_test => {
                    let mut negated = false;
                    let mut value = Value::Null;
                    for part in op.into_inner() {
                        match part.as_rule() {
                            Rule::kw_not => negated = true,
                            Rule::true_lit => value = Value::Bool(true),
                            Rule::false_lit => value = Value::Bool(false),
                            _ => {}
                        }
                    }
                    let test = is(x, value);
                    if negated {
                        func(Func::Not, vec![test])
                    } else {
                        test
                    }
                }
                _ => return Err(Unexpected),
            }
            .into())
        })
        .map_infix(|lhs, op, rhs| {
            let (a, b) = (lhs?.expr, rhs?.expr);
            let (f, args) = match (op.as_rule(), op.as_str()) {
                (Rule::op_or, _) => (Func::Or, vec![a, b]),
                (Rule::op_and, _) => (Func::And, vec![a, b]),
                (_, "=") => (Func::Eq, vec![a, b]),
                (_, "<>" | "!=") => (Func::Ne, vec![a, b]),
                (_, "<") => (Func::Lt, vec![a, b]),
                (_, "<=") => (Func::Le, vec![a, b]),
                // `a > b` is `b < a`, so the right operand is evaluated first
                (_, ">") => (Func::Lt, vec![b, a]),
                (_, ">=") => (Func::Le, vec![b, a]),
                (_, "|") => (Func::BitOr, vec![a, b]),
                (_, "&") => (Func::BitAnd, vec![a, b]),
                (_, "#") => (Func::BitXor, vec![a, b]),
                (_, "<<") => (Func::LShift, vec![a, b]),
                (_, ">>") => (Func::RShift, vec![a, b]),
                (_, "+") => (Func::Add, vec![a, b]),
                (_, "-") => (Func::Sub, vec![a, b]),
                (_, "*") => (Func::Mul, vec![a, b]),
                (_, "/") => (Func::Div, vec![a, b]),
                (_, "%") => (Func::Mod, vec![a, b]),
                _ => return Err(Unexpected),
            };
            Ok(func(f, args).into())
        })
        .parse(pair.into_inner())
}

/// The expressions among a pair's children (skipping keywords and punctuation).
fn inner_exprs(pair: Pair<'_, Rule>) -> Result<Vec<Expr>, Unexpected> {
    pair.into_inner()
        .filter(|p| p.as_rule() == Rule::expr)
        .map(|p| build(p).map(|o| o.expr))
        .collect()
}

fn primary(pair: Pair<'_, Rule>) -> Result<Operand, Unexpected> {
    let text = pair.as_str();
    let expr = match pair.as_rule() {
        Rule::integer => constant(Value::Int(text.parse().map_err(|_| Unexpected)?)),
        Rule::maxint => {
            return Ok(Operand {
                expr: constant(Value::Int(i64::MIN)),
                maxint: true,
            })
        }
        Rule::double => constant(Value::Double(
            parse_double(text.as_bytes()).ok_or(Unexpected)?,
        )),
        Rule::null_lit => constant(Value::Null),
        Rule::true_lit => constant(Value::Bool(true)),
        Rule::false_lit => constant(Value::Bool(false)),
        Rule::variable => Expr::Var(text[1..].to_string()),
        Rule::paren => inner_exprs(pair)?.pop().ok_or(Unexpected)?,
        Rule::call => {
            let name = pair.clone().into_inner().next().ok_or(Unexpected)?;
            let def = find_function(name.as_str()).ok_or(Unexpected)?;
            let mut args = inner_exprs(pair)?;
            if def.arity.with_default_seed(args.len()) {
                args.push(Expr::Var("default_seed".to_string()));
            }
            func(def.func, args)
        }
        Rule::case_expr => {
            let has_else = pair
                .clone()
                .into_inner()
                .any(|p| p.as_rule() == Rule::kw_else);
            let mut args = inner_exprs(pair)?;
            if !has_else {
                args.push(constant(Value::Null));
            }
            func(Func::Case, args)
        }
        _ => return Err(Unexpected),
    };
    Ok(expr.into())
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
