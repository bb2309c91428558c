//! Expressions of `\set`, `\if` and `\elif`: pgbench's `exprscan.l` (EXPR state) and
//! `exprparse.y`, compiled to [`Expr`] the way `exprparse.y` builds its nodes.
//!
//! Parsing happens in three steps, so that every error is the one bison and flex report,
//! at the same column:
//! 1. a flex-equivalent lexer (`lexer.rs`) reads the whole logical line. flex raises its errors
//!    (`unexpected character`, constant overflows) as tokens are read and, while
//!    reporting any error, reads the rest of the line, so the last lexer error of a line
//!    always wins;
//! 2. the pest grammar (`script.pest`) checks the operator/operand structure; its failure
//!    position is the token bison stops at. What bison rejects beyond that structure
//!    (a second comparison in a non-associative chain, `9223372036854775808` not right
//!    after a unary minus) is found on the token stream (`checks.rs`), and so are unknown
//!    function names and wrong argument counts, which bison reports as soon as the name
//!    or `)` is shifted (from the function table, [`crate::functions::FUNCTIONS`]);
//! 3. pest's Pratt parser folds the operators (`build.rs`) with exprparse.y's
//!    precedence table (`precedence.rs`, which the bison replay of `checks.rs` reads
//!    too).
//!
//! bison's own limit is replayed too: its stack holds 10000 states, and an expression
//! nested deeper fails with `memory exhausted` at the token where the stack fills up.
//! A flat chain of any length (`1+1+...+1`) costs neither bison nor us any stack: pest
//! repeats and the Pratt parser folds in loops. Nesting (prefix operators, parentheses,
//! calls, CASE) recurses in pest and the tree builder once per level, so expressions
//! nested deeper than a few levels (stock accepts nearly 10000) are parsed on a thread
//! whose stack is sized for them, and pest never reads past the token where bison's
//! stack fills. The trees themselves are walked without recursion (see [`Expr`]).

mod build;
mod checks;
mod lexer;
mod precedence;

use pest::error::InputLocation;
use pest::Parser;

use super::grammar::{Grammar, Rule};
use crate::ast::Expr;
use crate::error::{ScriptError, SyntaxError, SyntaxMessage};
use build::build;
use checks::{
    bison_stack, misplaced_maxint, nonassoc_violation, semantic_error, BisonStack, BISON_MAX_DEPTH,
};
use lexer::{lex, Token};

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
    let stack = bison_stack(tokens);
    // Where bison's stack fills, only a syntax error before that token can win, so pest
    // reads no further: past the limit it would recurse once per level, without bound.
    let end = match stack.exhausted_at {
        Some(at) => tokens[at].end,
        None => tokens.last().map_or(src.len(), |t| t.start),
    };
    let input = &src[from..end];
    // pest and the tree builder recurse once per nesting level, bison does not: deep
    // expressions (stock accepts nearly 10000 levels) get a stack of their own
    let (syntax_at, expr) = if stack.max_depth > DEEP_EXPRESSION {
        let levels = stack.max_depth.min(BISON_MAX_DEPTH);
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
