//! What both walkers of [`super`] share: the client state an evaluation reads
//! ([`EvalContext`]), and the rules applied once arguments are known: the laziness of
//! `AND`/`OR`, NULL propagation, and `debug()`'s line.

use crate::ast::{Func, Value};
use crate::error::EvalError;
use crate::functions::apply;
use crate::prng::Prng;
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

/// An evaluation's result. The error is boxed so that a result fits in two
/// registers, which the recursion passes up at every level.
pub(super) type Evaluated = Result<Value, Box<EvalError>>;

/// Lazy `AND` / `OR` once the first operand is known: the result, if the second
/// operand is not needed (NULL gives NULL, so `NULL OR TRUE` is NULL; AND stops on
/// false, OR on true). Operands must be booleans.
#[inline]
pub(super) fn logical_short_cut(
    is_and: bool,
    first: Value,
) -> Result<Option<Value>, Box<EvalError>> {
    if matches!(first, Value::Null) {
        return Ok(Some(Value::Null));
    }
    Ok((first.to_bool()? != is_and).then_some(Value::Bool(!is_and)))
}

/// Lazy `AND` / `OR` from the second operand's value.
#[inline]
pub(super) fn logical_result(second: Value) -> Evaluated {
    match second {
        Value::Null => Ok(Value::Null),
        b => Ok(Value::Bool(b.to_bool()?)),
    }
}

/// NULL propagation (not for `IS` and `debug()`), then the function itself.
#[inline]
pub(super) fn finish(func: Func, vals: &[Value], ctx: &mut EvalContext<'_>) -> Evaluated {
    if func == Func::Debug {
        debug(ctx, vals[0]);
    } else if func != Func::Is && vals.iter().any(|v| matches!(v, Value::Null)) {
        return Ok(Value::Null);
    }
    Ok(apply(func, vals, ctx.rng)?)
}

/// `debug()`: one line on the debug stream; write errors are ignored as pgbench's
/// `fprintf(stderr)` ignores them.
#[cold]
fn debug(ctx: &mut EvalContext<'_>, v: Value) {
    let mut line = format!(
        "debug(script={},command={}): ",
        ctx.script_index, ctx.command_index
    );
    v.write_debug(&mut line);
    line.push('\n');
    let _ = ctx.debug_out.write_all(line.as_bytes());
}
