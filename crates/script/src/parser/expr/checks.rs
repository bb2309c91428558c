//! What bison rejects beyond the operator structure pest checks: a second comparison
//! in a non-associative chain, `9223372036854775808` not right after a unary minus,
//! unknown function names and argument counts (reported as the name or `)` is
//! shifted), and a parser stack deeper than bison's 10000 states.

use super::lexer::{Tok, Token};
use super::precedence::{binary_level, left_assoc, non_associative_infix, prefix_level};
use crate::error::SyntaxMessage;
use crate::functions::{find_function, FunctionDef};

/// The operators of `%nonassoc '<' '>' '=' LE_OP GE_OP NE_OP`.
fn is_comparison(kind: Tok) -> bool {
    non_associative_infix(kind)
}

/// `%nonassoc '<' '>' '=' LE_OP GE_OP NE_OP`: a comparison whose left operand is an
/// unparenthesised comparison is a syntax error (`1 < 2 < 3`). The first comparison is
/// closed by anything that binds looser (IS forms, AND, OR) and a NOT starts a new scope
/// (`1 < NOT 2 < 3` is `1 < NOT (2 < 3)`).
pub(super) fn nonassoc_violation(tokens: &[Token]) -> Option<usize> {
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
pub(super) fn misplaced_maxint(tokens: &[Token]) -> Option<usize> {
    tokens.iter().enumerate().position(|(i, t)| {
        t.kind == Tok::MaxInt
            && !(i >= 1
                && tokens[i - 1].kind == Tok::Minus
                && (i == 1 || !ends_operand(tokens[i - 2].kind)))
    })
}

/// An unknown function name (reported when the name is read) or a wrong number of
/// arguments (reported at the closing parenthesis), the first in token order.
pub(super) fn semantic_error(
    src: &str,
    tokens: &[Token],
) -> Option<(usize, SyntaxMessage, String)> {
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
                if let Some(message) = function.arity.check_call(nargs) {
                    return Some((i, message, function.name.to_string()));
                }
            }
            _ => {}
        }
    }
    None
}

/// bison's `YYMAXDEPTH`: its parser stack holds at most this many states.
pub(super) const BISON_MAX_DEPTH: usize = 10_000;

/// What [`bison_stack`] found.
pub(super) struct BisonStack {
    /// The token at which bison's stack overflows ("memory exhausted"), if it does.
    pub exhausted_at: Option<usize>,
    /// The deepest the stack gets (in states), to size the native stack for pest.
    pub max_depth: usize,
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

/// Replays bison's shifts and reductions on the token stream to follow the depth of
/// its stack, which it checks at every push. Meaningful up to the first syntax error;
/// past it the replay only has to stay panic-free.
pub(super) fn bison_stack(tokens: &[Token]) -> BisonStack {
    let mut replay = Replay {
        stack: Vec::new(),
        result: BisonStack {
            exhausted_at: None,
            max_depth: 1,
        },
    };
    let mut previous: Option<Tok> = None;
    for (at, token) in tokens.iter().enumerate() {
        replay.token(token.kind, previous, at);
        previous = Some(token.kind);
    }
    replay.result
}

/// bison's symbol stack during [`bison_stack`].
struct Replay {
    stack: Vec<Sym>,
    result: BisonStack,
}

impl Replay {
    /// Shift or reduce for one token; `previous` is the token before it.
    fn token(&mut self, kind: Tok, previous: Option<Tok>, at: usize) {
        let operand_before = previous.is_some_and(ends_operand);
        let after_is = matches!(previous, Some(Tok::Is))
            || (previous == Some(Tok::Not) && self.stack.last() == Some(&Sym::Other));
        match kind {
            Tok::Null | Tok::True | Tok::False if after_is => {
                // expr IS [NOT] NULL|TRUE|FALSE, reduced at once
                self.push(Sym::Other, at);
                while self.stack.last() == Some(&Sym::Other) {
                    self.stack.pop();
                }
                if self.stack.last() == Some(&Sym::Expr) {
                    self.stack.pop();
                }
                self.stack.push(Sym::Expr);
            }
            Tok::Not if after_is => self.push(Sym::Other, at),
            Tok::Integer | Tok::Double | Tok::Variable | Tok::Null | Tok::True | Tok::False => {
                self.push(Sym::Other, at);
                self.stack.pop();
                self.stack.push(Sym::Expr);
            }
            Tok::MaxInt => {
                // '-' MAXINT_PLUS_ONE_CONST, reduced at once
                self.push(Sym::Other, at);
                self.stack.pop();
                if matches!(self.stack.last(), Some(Sym::Prefix(_))) {
                    self.stack.pop();
                }
                self.stack.push(Sym::Expr);
            }
            Tok::Function => self.push(Sym::Other, at),
            // the function name (already on the stack) is followed by Call
            Tok::LParen if previous == Some(Tok::Function) => self.push(Sym::Call, at),
            Tok::LParen => self.push(Sym::Group, at),
            // `-` and `+` are binary right after an operand
            kind if prefix_level(kind).is_some()
                && !(operand_before && binary_level(kind).is_some()) =>
            {
                let level = prefix_level(kind).unwrap_or(0);
                self.push(Sym::Prefix(level), at);
            }
            Tok::Is => {
                self.reduce(4);
                self.push(Sym::Other, at);
            }
            Tok::IsNull | Tok::NotNull => {
                self.reduce(4);
                self.push(Sym::Other, at);
                self.stack.pop();
            }
            kind if binary_level(kind).is_some() => {
                let level = binary_level(kind).unwrap_or(0);
                self.reduce(level);
                self.push(Sym::Infix(level), at);
            }
            Tok::Comma | Tok::RParen => self.close_list(kind, at),
            Tok::Case | Tok::When | Tok::Then | Tok::Else | Tok::KwEnd => self.case(kind, at),
            _ => {}
        }
    }

    /// `,` and `)` of a call or a parenthesised expression.
    fn close_list(&mut self, kind: Tok, at: usize) {
        self.reduce(0);
        if kind == Tok::Comma {
            if self.stack.last() == Some(&Sym::Call) {
                // an empty first argument: `elist: /* empty */`
                self.push(Sym::Elist, at);
            } else {
                self.close_argument();
            }
            self.push(Sym::Comma, at);
        } else if self.ends(&[Sym::Group, Sym::Expr]) {
            self.push(Sym::Other, at);
            self.stack.truncate(self.stack.len() - 3);
            self.stack.push(Sym::Expr);
        } else {
            if self.stack.last() == Some(&Sym::Call) {
                self.push(Sym::Elist, at);
            } else {
                self.close_argument();
            }
            // function '(' elist ')'
            self.push(Sym::Other, at);
            self.stack.truncate(self.stack.len().saturating_sub(4));
            self.stack.push(Sym::Expr);
        }
    }

    /// The keywords of `CASE WHEN c THEN v ... [ELSE e] END`.
    fn case(&mut self, kind: Tok, at: usize) {
        if kind == Tok::Case {
            self.push(Sym::Case, at);
            return;
        }
        self.reduce(0);
        match kind {
            Tok::When => {
                self.close_when();
                self.push(Sym::When, at);
            }
            Tok::Then => self.push(Sym::Then, at),
            Tok::Else => {
                self.close_when();
                self.push(Sym::Else, at);
            }
            _ => {
                self.close_when();
                self.push(Sym::Other, at);
                let n = if self.ends(&[Sym::Else, Sym::Expr, Sym::Other]) {
                    5
                } else {
                    3
                };
                self.stack.truncate(self.stack.len().saturating_sub(n));
                self.stack.push(Sym::Expr);
            }
        }
    }

    fn push(&mut self, sym: Sym, at: usize) {
        self.stack.push(sym);
        // the state stack holds one more entry than the symbol stack
        let depth = self.stack.len() + 1;
        self.result.max_depth = self.result.max_depth.max(depth);
        if depth >= BISON_MAX_DEPTH && self.result.exhausted_at.is_none() {
            self.result.exhausted_at = Some(at);
        }
    }

    fn ends(&self, tail: &[Sym]) -> bool {
        self.stack.ends_with(tail)
    }

    /// Reduce operators that bind tighter than a lookahead of `level` (0: a closer).
    fn reduce(&mut self, level: u8) {
        let binds_tighter = |l: u8| l > level || (l == level && left_assoc(l));
        loop {
            match self.stack[..] {
                [.., Sym::Expr, Sym::Infix(l), Sym::Expr] if binds_tighter(l) => {
                    self.stack.truncate(self.stack.len() - 3);
                    self.stack.push(Sym::Expr);
                }
                [.., Sym::Prefix(l), Sym::Expr] if binds_tighter(l) => {
                    self.stack.truncate(self.stack.len() - 2);
                    self.stack.push(Sym::Expr);
                }
                _ => return,
            }
        }
    }

    /// `elist: expr | elist ',' expr` once the argument before `,` or `)` is complete.
    fn close_argument(&mut self) {
        if self.ends(&[Sym::Elist, Sym::Comma, Sym::Expr]) {
            self.stack.truncate(self.stack.len() - 3);
            self.stack.push(Sym::Elist);
        } else if self.ends(&[Sym::Call, Sym::Expr]) {
            self.stack.pop();
            self.stack.push(Sym::Elist);
        }
    }

    /// `when_then_list: when_then_list WHEN expr THEN expr | WHEN expr THEN expr`.
    fn close_when(&mut self) {
        let one = [Sym::When, Sym::Expr, Sym::Then, Sym::Expr];
        if self.ends(&one) {
            let n = if self.stack.len() > 4 && self.stack[self.stack.len() - 5] == Sym::WhenThenList
            {
                5
            } else {
                4
            };
            self.stack.truncate(self.stack.len() - n);
            self.stack.push(Sym::WhenThenList);
        }
    }
}
