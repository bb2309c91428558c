//! The tree: pest's Pratt parser folds the operators with exprparse.y's precedence
//! table into [`Expr`] nodes the way `exprparse.y` builds them, and the table of
//! functions callable by name (`PGBENCH_FUNCTIONS`).

use std::sync::LazyLock;

use pest::iterators::Pair;
use pest::pratt_parser::{Assoc, Op, PrattParser};

use super::lexer::parse_double;
use crate::ast::{Expr, Func, Value};
use crate::error::SyntaxMessage;
use crate::parser::Rule;

#[derive(Debug, Clone, Copy)]
pub(super) enum Arity {
    Exact(usize),
    /// `least`, `greatest`
    AtLeastOne,
    /// `hash*(v [, seed])`
    Hash,
    /// `permute(i, size [, seed])`
    Permute,
}

impl Arity {
    pub(super) fn check(self, nargs: usize) -> Option<SyntaxMessage> {
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

pub(super) struct FunctionDef {
    pub name: &'static str,
    func: Func,
    pub arity: Arity,
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
pub(super) fn find_function(name: &str) -> Option<&'static FunctionDef> {
    FUNCTIONS.iter().find(|f| f.name.eq_ignore_ascii_case(name))
}

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
