//! The evaluator for subtrees deeper than the recursion allows: the same rules as
//! [`super`] (argument order, laziness, the 16-argument limit, NULL propagation; the
//! helpers that decide them are shared in `rules.rs`), walked with two explicit
//! stacks on the heap, one of pending steps and one of computed values, so that
//! native stack use does not grow with the depth of the tree.

use super::rules::{finish, logical_result, logical_short_cut, EvalContext, Evaluated, MAX_FARGS};
use crate::ast::{Expr, Func, Value};
use crate::error::EvalError;

/// What is left to do, innermost last.
enum Step<'e> {
    /// Evaluate this node and push its value.
    Eval(&'e Expr),
    /// Arguments `..next` of a standard function are on the value stack.
    Call {
        func: Func,
        args: &'e [Expr],
        next: usize,
    },
    /// `AND`/`OR` whose first operand's value is on the value stack.
    Logical { is_and: bool, second: &'e Expr },
    /// `AND`/`OR` whose second operand's value is on the value stack.
    LogicalEnd,
    /// `CASE` whose condition `args[pair * 2]` has its value on the value stack.
    Case { args: &'e [Expr], pair: usize },
}

/// Evaluates `expr` for one client, as `eval::evaluate` does.
pub(super) fn evaluate(expr: &Expr, ctx: &mut EvalContext<'_>) -> Evaluated {
    let mut steps = vec![Step::Eval(expr)];
    let mut values: Vec<Value> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Eval(Expr::Const(v)) => values.push(*v),
            Step::Eval(Expr::Var(name)) => values.push(ctx.vars.value(name)?),
            Step::Eval(Expr::Func { func, args }) => {
                if !func.arity().accepts(args.len()) {
                    return Err(EvalError::ArgumentCount(func.name()).into());
                }
                match func {
                    Func::And | Func::Or => steps.push(Step::Logical {
                        is_and: *func == Func::And,
                        second: &args[1],
                    }),
                    Func::Case => steps.push(Step::Case { args, pair: 0 }),
                    _ => {
                        steps.push(Step::Call {
                            func: *func,
                            args,
                            next: 1,
                        });
                        if args.is_empty() {
                            continue;
                        }
                    }
                }
                steps.push(Step::Eval(&args[0]));
            }
            Step::Call { func, args, next } => {
                if next < args.len().min(MAX_FARGS) {
                    steps.push(Step::Call {
                        func,
                        args,
                        next: next + 1,
                    });
                    steps.push(Step::Eval(&args[next]));
                    continue;
                }
                if args.len() > MAX_FARGS {
                    return Err(EvalError::TooManyArguments.into());
                }
                let base = values.len() - args.len();
                let v = finish(func, &values[base..], ctx)?;
                values.truncate(base);
                values.push(v);
            }
            Step::Logical { is_and, second } => {
                let first = pop(&mut values);
                match logical_short_cut(is_and, first)? {
                    Some(v) => values.push(v),
                    None => {
                        steps.push(Step::LogicalEnd);
                        steps.push(Step::Eval(second));
                    }
                }
            }
            Step::LogicalEnd => {
                let second = pop(&mut values);
                values.push(logical_result(second)?);
            }
            Step::Case { args, pair } => {
                let else_at = args.len() - 1;
                if pop(&mut values).truth() {
                    steps.push(Step::Eval(&args[pair * 2 + 1]));
                } else if pair * 2 + 2 < else_at {
                    steps.push(Step::Case {
                        args,
                        pair: pair + 1,
                    });
                    steps.push(Step::Eval(&args[pair * 2 + 2]));
                } else {
                    steps.push(Step::Eval(&args[else_at]));
                }
            }
        }
    }
    Ok(pop(&mut values))
}

/// The value a finished step left; every step that reads one follows the step that
/// pushed it.
fn pop(values: &mut Vec<Value>) -> Value {
    values.pop().unwrap_or(Value::Null)
}
