//! Evaluation of `\set`, `\if` and `\elif` expressions against one client's state
//! (pgbench's `evaluateExpr`, `evalLazyFunc`, `evalStandardFunc`).
//!
//! Arguments are evaluated left to right (the parser already turned `a > b` into
//! `b < a`, which is why stock pgbench draws the right operand's random numbers
//! first); `AND`, `OR` and `CASE` evaluate only what they need; any other function
//! returns NULL when an argument is NULL, except `IS` and `debug()`. Ordinary int and
//! double evaluation allocates nothing. What each function computes lives in
//! [`crate::functions`]; the variable table in [`crate::variables`].
//!
//! A client evaluates each script expression many times: [`Compiled`] (`eval/compiled.rs`)
//! is the form it runs, with the same results as the tree walked here.
//!
//! Trees may be as deep as a script line is long (`1+1+...+1` is a left-deep chain),
//! so recursion stops at [`RECURSION_LIMIT`] levels and deeper subtrees are evaluated
//! by the same rules with an explicit stack on the heap (`eval/deep.rs`). Stock pgbench
//! recurses all the way and crashes on such chains.

mod compiled;
mod deep;
mod rules;

use crate::ast::{Expr, Func, Value};
pub use crate::error::EvalError;
use crate::functions::apply;
pub use compiled::Compiled;
use rules::{finish, logical_result, logical_short_cut, Evaluated};
pub use rules::{EvalContext, MAX_FARGS};

/// Evaluates an expression for one client.
pub fn evaluate(expr: &Expr, ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    eval(expr, ctx, RECURSION_LIMIT).map_err(|e| *e)
}

/// How deep the recursive evaluator goes before it hands a subtree to the heap-stack walker; far
/// beyond any hand-written expression, and a few KiB of native stack.
pub const RECURSION_LIMIT: usize = 64;

/// Leaves inline, so that a call's constant and variable arguments cost no call of
/// their own (a generated script's `sb_special(1, 10000, 1, 75, 12)` has five), and
/// only function nodes enter the recursion. Not forced in unoptimised builds, whose
/// frames would then hold every inlined copy's temporaries (`RECURSION_LIMIT` levels
/// must fit a small thread stack there too).
#[cfg_attr(not(debug_assertions), inline(always))]
fn eval(expr: &Expr, ctx: &mut EvalContext<'_>, depth: usize) -> Evaluated {
    match expr {
        Expr::Const(v) => Ok(*v),
        Expr::Var(name) => Ok(ctx.vars.value(name)?),
        Expr::Func { func, args } => call(expr, *func, args, ctx, depth),
    }
}

#[inline(never)]
fn call(
    expr: &Expr,
    func: Func,
    args: &[Expr],
    ctx: &mut EvalContext<'_>,
    depth: usize,
) -> Evaluated {
    if depth == 0 {
        return deep::evaluate(expr, ctx);
    }
    match func {
        Func::And | Func::Or => logical(func, args, ctx, depth - 1),
        Func::Case => case(args, ctx, depth - 1),
        _ => standard(func, args, ctx, depth - 1),
    }
}

fn logical(func: Func, args: &[Expr], ctx: &mut EvalContext<'_>, depth: usize) -> Evaluated {
    let [first, second] = args else {
        return Err(EvalError::ArgumentCount(func.name()).into());
    };
    let first = eval(first, ctx, depth)?;
    if let Some(v) = logical_short_cut(func == Func::And, first)? {
        return Ok(v);
    }
    logical_result(eval(second, ctx, depth)?)
}

/// `CASE WHEN c1 THEN v1 ... ELSE e END` as `Case(c1, v1, ..., e)`: conditions by
/// truthiness, only the chosen branch evaluated.
fn case(args: &[Expr], ctx: &mut EvalContext<'_>, depth: usize) -> Evaluated {
    if !Func::Case.arity().accepts(args.len()) {
        return Err(EvalError::ArgumentCount(Func::Case.name()).into());
    }
    let (pairs, else_branch) = args.split_at(args.len() - 1);
    for pair in pairs.chunks_exact(2) {
        if eval(&pair[0], ctx, depth)?.truth() {
            return eval(&pair[1], ctx, depth);
        }
    }
    eval(&else_branch[0], ctx, depth)
}

/// Every other function: evaluate up to 16 arguments left to right, fail if more
/// remain, propagate NULL, then apply.
fn standard(func: Func, args: &[Expr], ctx: &mut EvalContext<'_>, depth: usize) -> Evaluated {
    if !func.arity().accepts(args.len()) {
        return Err(EvalError::ArgumentCount(func.name()).into());
    }
    // Small calls (all but greatest/least) avoid preparing a 16-slot array.
    match args {
        // nothing to propagate, and `apply` folds to `pi()` here
        [] => Ok(apply(func, &[], ctx.rng)?),
        [a] => {
            let a = eval(a, ctx, depth)?;
            finish(func, &[a], ctx)
        }
        [a, b] => {
            let a = eval(a, ctx, depth)?;
            let b = eval(b, ctx, depth)?;
            finish(func, &[a, b], ctx)
        }
        [a, b, c] => {
            let a = eval(a, ctx, depth)?;
            let b = eval(b, ctx, depth)?;
            let c = eval(c, ctx, depth)?;
            finish(func, &[a, b, c], ctx)
        }
        _ if args.len() <= FEW_ARGS => {
            let mut vals = [Value::Null; FEW_ARGS];
            for (slot, arg) in vals.iter_mut().zip(args) {
                *slot = eval(arg, ctx, depth)?;
            }
            finish(func, &vals[..args.len()], ctx)
        }
        _ => many(func, args, ctx, depth),
    }
}

/// Calls up to this many arguments take a small array on the stack (`sb_special()`
/// has five); longer `greatest()`/`least()` lists the 16 slots of [`many`].
const FEW_ARGS: usize = 6;

/// `greatest()`/`least()` with more than [`FEW_ARGS`] arguments: up to 16 evaluated,
/// an error if more remain. Out of line, so that the common calls' frames stay small.
#[inline(never)]
fn many(func: Func, args: &[Expr], ctx: &mut EvalContext<'_>, depth: usize) -> Evaluated {
    let mut vals = [Value::Null; MAX_FARGS];
    for (slot, arg) in vals.iter_mut().zip(args) {
        *slot = eval(arg, ctx, depth)?;
    }
    if args.len() > MAX_FARGS {
        return Err(EvalError::TooManyArguments.into());
    }
    finish(func, &vals[..args.len()], ctx)
}
