//! Evaluation of `\set`, `\if` and `\elif` expressions against one client's state
//! (pgbench's `evaluateExpr`, `evalLazyFunc`, `evalStandardFunc`), and the
//! evaluator's error type, whose messages are pgbench's text.
//!
//! Arguments are evaluated left to right (the parser already turned `a > b` into
//! `b < a`, which is why stock pgbench draws the right operand's random numbers
//! first); `AND`, `OR` and `CASE` evaluate only what they need; any other function
//! returns NULL when an argument is NULL, except `IS` and `debug()`. Ordinary int and
//! double evaluation allocates nothing. What each function computes lives in
//! [`crate::functions`]; the variable table in [`crate::variables`].

use crate::ast::{Expr, Func, Value};
use crate::functions::{apply, arity_ok, func_name};
use crate::prng::Prng;
use crate::value::PrintfF;
use crate::variables::Variables;

/// pgbench's `MAX_FARGS`: a call evaluates at most this many arguments at run time.
pub const MAX_FARGS: usize = 16;

/// What one evaluation needs from the client running it.
pub struct EvalContext<'a> {
    /// The client's variables (read by `:name`, converted lazily).
    pub vars: &'a mut Variables,
    /// The client's `cs_func_rs`, drawn by `random*()`.
    pub rng: &'a mut Prng,
    /// 0-based index of the running script, as `debug()` prints it.
    pub script_index: usize,
    /// 1-based index of the running command, as `debug()` prints it.
    pub command_index: usize,
    /// Where `debug()` writes its lines (stderr in pgbench).
    pub debug_out: &'a mut dyn std::io::Write,
}

/// Why an evaluation (or a variable assignment) failed. `Display` is pgbench's
/// message, which the runner prints as `pgbench: error: <message>` before the
/// `client %d aborted in command ...` line.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("undefined variable \"{0}\"")]
    UndefinedVariable(String),
    /// A variable holding the empty string: pgbench prints no message at all (see
    /// [`EvalError::is_silent`]).
    #[error("")]
    EmptyValue(String),
    #[error("malformed variable \"{name}\" value: \"{value}\"")]
    MalformedVariable { name: String, value: String },
    #[error("value \"{0}\" is out of range for type bigint")]
    ValueOutOfRange(String),
    #[error("invalid input syntax for type bigint: \"{0}\"")]
    InvalidBigint(String),
    #[error("{context}: invalid variable name: \"{name}\"")]
    InvalidVariableName { context: String, name: String },
    /// `from`/`to` are pgbench's type names (`none,null,int,double,boolean`).
    #[error("cannot coerce {from} to {to}")]
    CannotCoerce {
        from: &'static str,
        to: &'static str,
    },
    /// Holds the value after `rint`.
    #[error("double to int overflow for {}", printf_f(.0))]
    DoubleToIntOverflow(f64),
    /// `add`, `sub`, `mul` or `div`.
    #[error("bigint {0} out of range")]
    BigintOutOfRange(&'static str),
    #[error("division by zero")]
    DivisionByZero,
    #[error("empty range given to random")]
    EmptyRange,
    #[error("random range is too large")]
    RangeTooLarge,
    #[error("gaussian parameter must be at least 2.000000 (not {})", printf_f(.0))]
    GaussianParameter(f64),
    #[error("zipfian parameter must be in range [1.001, 1000] (not {})", printf_f(.0))]
    ZipfianParameter(f64),
    #[error("exponential parameter must be greater than zero (not {})", printf_f(.0))]
    ExponentialParameter(f64),
    #[error("permute size parameter must be greater than zero")]
    PermuteSize,
    #[error("too many function arguments, maximum is 16")]
    TooManyArguments,
    /// Only for trees the parser would not build (it checks arity at load time).
    #[error("unexpected number of arguments ({0})")]
    ArgumentCount(&'static str),
}

fn printf_f(d: &f64) -> PrintfF {
    PrintfF(*d)
}

impl EvalError {
    /// Whether pgbench prints nothing for this error (a variable holding `""`); the
    /// client is still aborted.
    pub fn is_silent(&self) -> bool {
        matches!(self, EvalError::EmptyValue(_))
    }
}

/// Evaluates an expression for one client.
pub fn evaluate(expr: &Expr, ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    eval(expr, ctx).map_err(|e| *e)
}

/// The recursion keeps its error boxed so that a result fits in two registers.
type Evaluated = Result<Value, Box<EvalError>>;

fn eval(expr: &Expr, ctx: &mut EvalContext<'_>) -> Evaluated {
    match expr {
        Expr::Const(v) => Ok(*v),
        Expr::Var(name) => Ok(ctx.vars.value(name)?),
        Expr::Func { func, args } => match func {
            Func::And | Func::Or => logical(*func == Func::And, args, ctx),
            Func::Case => case(args, ctx),
            _ => standard(*func, args, ctx),
        },
    }
}

/// Lazy `AND` / `OR`: a NULL first operand gives NULL without evaluating the second
/// (so `NULL OR TRUE` is NULL); operands must be booleans.
fn logical(is_and: bool, args: &[Expr], ctx: &mut EvalContext<'_>) -> Evaluated {
    let [first, second] = args else {
        let f = if is_and { Func::And } else { Func::Or };
        return Err(EvalError::ArgumentCount(func_name(f)).into());
    };
    let a = eval(first, ctx)?;
    if matches!(a, Value::Null) {
        return Ok(Value::Null);
    }
    // AND stops on false, OR on true.
    if a.to_bool()? != is_and {
        return Ok(Value::Bool(!is_and));
    }
    match eval(second, ctx)? {
        Value::Null => Ok(Value::Null),
        b => Ok(Value::Bool(b.to_bool()?)),
    }
}

/// `CASE WHEN c1 THEN v1 ... ELSE e END` as `Case(c1, v1, ..., e)`: conditions by
/// truthiness, only the chosen branch evaluated.
fn case(args: &[Expr], ctx: &mut EvalContext<'_>) -> Evaluated {
    if !arity_ok(Func::Case, args.len()) {
        return Err(EvalError::ArgumentCount(func_name(Func::Case)).into());
    }
    let (pairs, else_branch) = args.split_at(args.len() - 1);
    for pair in pairs.chunks_exact(2) {
        if eval(&pair[0], ctx)?.truth() {
            return eval(&pair[1], ctx);
        }
    }
    eval(&else_branch[0], ctx)
}

/// Every other function: evaluate up to 16 arguments left to right, fail if more
/// remain, propagate NULL, then apply.
fn standard(func: Func, args: &[Expr], ctx: &mut EvalContext<'_>) -> Evaluated {
    if !arity_ok(func, args.len()) {
        return Err(EvalError::ArgumentCount(func_name(func)).into());
    }
    // Small calls (all but greatest/least) avoid preparing a 16-slot array.
    match args {
        [] => Ok(apply(func, &[], ctx)?),
        [a] => {
            let a = eval(a, ctx)?;
            finish(func, &[a], ctx)
        }
        [a, b] => {
            let a = eval(a, ctx)?;
            let b = eval(b, ctx)?;
            finish(func, &[a, b], ctx)
        }
        [a, b, c] => {
            let a = eval(a, ctx)?;
            let b = eval(b, ctx)?;
            let c = eval(c, ctx)?;
            finish(func, &[a, b, c], ctx)
        }
        _ => {
            let mut vals = [Value::Null; MAX_FARGS];
            for (slot, arg) in vals.iter_mut().zip(args) {
                *slot = eval(arg, ctx)?;
            }
            if args.len() > MAX_FARGS {
                return Err(EvalError::TooManyArguments.into());
            }
            finish(func, &vals[..args.len()], ctx)
        }
    }
}

/// NULL propagation (not for `IS` and `debug()`), then the function itself.
#[inline]
fn finish(func: Func, vals: &[Value], ctx: &mut EvalContext<'_>) -> Evaluated {
    if func != Func::Is && func != Func::Debug && vals.iter().any(|v| matches!(v, Value::Null)) {
        return Ok(Value::Null);
    }
    Ok(apply(func, vals, ctx)?)
}
