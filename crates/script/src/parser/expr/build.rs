//! The tree: pest's Pratt parser folds the operators with exprparse.y's precedence
//! table (`precedence.rs`) into [`Expr`] nodes the way `exprparse.y` builds them,
//! resolving calls with the function table ([`crate::functions::FUNCTIONS`]).
//!
//! Chains of infix and postfix operators fold in a loop, so a flat `1+1+...+1` costs
//! no native stack; prefix operators, parentheses, calls and `CASE` recurse once per
//! level, which bison's stack limit bounds (see `mod.rs`).

use std::sync::LazyLock;

use pest::iterators::Pair;
use pest::pratt_parser::PrattParser;

use crate::ast::{Expr, Func, Value};
use crate::cnum::strtod;
use crate::functions::find_function;
use crate::parser::grammar::Rule;

/// exprparse.y's precedence table, from [`super::precedence::LEVELS`].
static PRATT: LazyLock<PrattParser<Rule>> = LazyLock::new(super::precedence::pratt);

/// The input broke an invariant the checks above guarantee.
#[derive(Debug)]
pub(super) struct Unexpected;

/// A folded operand; `maxint` marks the bare `9223372036854775808`, which only a unary
/// minus may take.
pub(super) struct Operand {
    pub expr: Expr,
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
pub(super) fn build(pair: Pair<'_, Rule>) -> Result<Operand, Unexpected> {
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
        Rule::double => constant(Value::Double(strtod(text).map_err(|_| Unexpected)?)),
        Rule::null_lit => constant(Value::Null),
        Rule::true_lit => constant(Value::Bool(true)),
        Rule::false_lit => constant(Value::Bool(false)),
        Rule::variable => Expr::Var(text[1..].to_string()),
        Rule::paren => inner_exprs(pair)?.pop().ok_or(Unexpected)?,
        Rule::call => {
            let name = pair.clone().into_inner().next().ok_or(Unexpected)?;
            let def = find_function(name.as_str()).ok_or(Unexpected)?;
            let mut args = inner_exprs(pair)?;
            if def.arity.takes_default_seed(args.len()) {
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
