//! Every non-lazy operator and built-in function of pgbench's expression language,
//! applied to already evaluated arguments, with pgbench's exact semantics and error
//! messages (`evalStandardFunc`), plus the pure algorithms behind them: the random
//! distributions, `permute`, and the two hash functions.
//!
//! Argument evaluation, the 16-argument limit, NULL propagation and the lazy
//! `AND`/`OR`/`CASE` belong to [`crate::eval`]. Transcendental functions go through
//! Rust's `f64` methods, which call the platform libm (glibc's `exp`, `log`, `pow`,
//! `sin`) exactly as pgbench does, so results are bit-identical.

use crate::ast::{Func, Value};
use crate::eval::{EvalContext, EvalError};
use crate::prng::Prng;

/// pgbench's `MIN_GAUSSIAN_PARAM`.
pub const MIN_GAUSSIAN_PARAM: f64 = 2.0;
/// pgbench's `MIN_ZIPFIAN_PARAM`.
pub const MIN_ZIPFIAN_PARAM: f64 = 1.001;
/// pgbench's `MAX_ZIPFIAN_PARAM`.
pub const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

/// The name pgbench gives a function in `PGBENCH_FUNCTIONS[]` (operators by symbol,
/// internal ones with a `!`), used in `unexpected number of arguments (%s)`.
pub fn func_name(func: Func) -> &'static str {
    match func {
        Func::Add => "+",
        Func::Sub => "-",
        Func::Mul => "*",
        Func::Div => "/",
        Func::Mod => "mod",
        Func::Eq => "=",
        Func::Ne => "<>",
        Func::Lt => "<",
        Func::Le => "<=",
        Func::And => "!and",
        Func::Or => "!or",
        Func::Not => "!not",
        Func::BitAnd => "&",
        Func::BitOr => "|",
        Func::BitXor => "#",
        Func::LShift => "<<",
        Func::RShift => ">>",
        Func::Is => "!is",
        Func::Case => "!case_end",
        Func::Abs => "abs",
        Func::Debug => "debug",
        Func::Double => "double",
        Func::Exp => "exp",
        Func::Greatest => "greatest",
        Func::Least => "least",
        Func::HashFnv1a => "hash_fnv1a",
        Func::HashMurmur2 => "hash_murmur2",
        Func::Int => "int",
        Func::Ln => "ln",
        Func::Pi => "pi",
        Func::Pow => "pow",
        Func::Sqrt => "sqrt",
        Func::Random => "random",
        Func::RandomExponential => "random_exponential",
        Func::RandomGaussian => "random_gaussian",
        Func::RandomZipfian => "random_zipfian",
        Func::Permute => "permute",
    }
}

/// Whether `nargs` evaluated arguments fit `func` (after the parser's rewrites, e.g.
/// `hash(v)` already carries `:default_seed`). The parser guarantees it; this guards
/// hand-built trees so that evaluation never indexes out of bounds.
pub fn arity_ok(func: Func, nargs: usize) -> bool {
    match func {
        Func::Pi => nargs == 0,
        Func::Not
        | Func::Abs
        | Func::Debug
        | Func::Double
        | Func::Exp
        | Func::Int
        | Func::Ln
        | Func::Sqrt => nargs == 1,
        Func::Greatest | Func::Least => nargs >= 1,
        Func::Case => nargs >= 3 && nargs % 2 == 1,
        Func::RandomExponential | Func::RandomGaussian | Func::RandomZipfian | Func::Permute => {
            nargs == 3
        }
        Func::Add
        | Func::Sub
        | Func::Mul
        | Func::Div
        | Func::Mod
        | Func::Eq
        | Func::Ne
        | Func::Lt
        | Func::Le
        | Func::And
        | Func::Or
        | Func::BitAnd
        | Func::BitOr
        | Func::BitXor
        | Func::LShift
        | Func::RShift
        | Func::Is
        | Func::HashFnv1a
        | Func::HashMurmur2
        | Func::Pow
        | Func::Random => nargs == 2,
    }
}

/// Applies a non-lazy function to its evaluated arguments (`evalStandardFunc` after
/// the argument loop). NULL arguments must already have been handled by the caller
/// except for `IS` and `debug()`, and the arity must satisfy [`arity_ok`].
#[inline]
pub fn apply(func: Func, args: &[Value], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    match func {
        Func::Add
        | Func::Sub
        | Func::Mul
        | Func::Div
        | Func::Eq
        | Func::Ne
        | Func::Lt
        | Func::Le => arith(func, args[0], args[1]),
        Func::Mod => int_div(func, args[0].to_int()?, args[1].to_int()?),
        Func::BitAnd | Func::BitOr | Func::BitXor | Func::LShift | Func::RShift => {
            let (l, r) = (args[0].to_int()?, args[1].to_int()?);
            Ok(Value::Int(match func {
                Func::BitAnd => l & r,
                Func::BitOr => l | r,
                Func::BitXor => l ^ r,
                // x86 shifts take the count modulo 64; C leaves larger counts undefined.
                Func::LShift => l.wrapping_shl(r as u32),
                _ => l.wrapping_shr(r as u32),
            }))
        }
        Func::Not => Ok(Value::Bool(!args[0].to_bool()?)),
        Func::Is => Ok(Value::Bool(is(args[0], args[1]))),
        Func::Pi => Ok(Value::Double(std::f64::consts::PI)),
        Func::Abs => Ok(abs(args[0])),
        Func::Debug => {
            debug(ctx, args[0]);
            Ok(args[0])
        }
        Func::Double => Ok(Value::Double(args[0].to_double()?)),
        Func::Sqrt => Ok(Value::Double(args[0].to_double()?.sqrt())),
        Func::Ln => Ok(Value::Double(args[0].to_double()?.ln())),
        Func::Exp => Ok(Value::Double(args[0].to_double()?.exp())),
        Func::Int => Ok(Value::Int(args[0].to_int()?)),
        Func::Pow => Ok(Value::Double(
            args[0].to_double()?.powf(args[1].to_double()?),
        )),
        Func::Greatest | Func::Least => extremum(func == Func::Least, args),
        Func::Random | Func::RandomExponential | Func::RandomGaussian | Func::RandomZipfian => {
            random(func, args, ctx.rng)
        }
        Func::HashFnv1a | Func::HashMurmur2 => {
            let (val, seed) = (args[0].to_int()?, args[1].to_int()?);
            Ok(Value::Int(if func == Func::HashFnv1a {
                hash_fnv1a(val, seed as u64)
            } else {
                hash_murmur2(val, seed as u64)
            }))
        }
        Func::Permute => {
            let (val, size, seed) = (args[0].to_int()?, args[1].to_int()?, args[2].to_int()?);
            if size <= 0 {
                return Err(EvalError::PermuteSize);
            }
            Ok(Value::Int(permute(val, size, seed)))
        }
        // Lazy functions never reach here; answer as pgbench's arity check would.
        Func::And | Func::Or | Func::Case => Err(EvalError::ArgumentCount(func_name(func))),
    }
}

/// `+ - * /` and comparisons: double if either side is double, else checked int64.
#[inline]
fn arith(func: Func, l: Value, r: Value) -> Result<Value, EvalError> {
    if matches!(l, Value::Double(_)) || matches!(r, Value::Double(_)) {
        let (l, r) = (l.to_double()?, r.to_double()?);
        return Ok(match func {
            Func::Add => Value::Double(l + r),
            Func::Sub => Value::Double(l - r),
            Func::Mul => Value::Double(l * r),
            Func::Div => Value::Double(l / r),
            Func::Eq => Value::Bool(l == r),
            Func::Ne => Value::Bool(l != r),
            Func::Lt => Value::Bool(l < r),
            _ => Value::Bool(l <= r),
        });
    }
    let (l, r) = (l.to_int()?, r.to_int()?);
    match func {
        Func::Add => l
            .checked_add(r)
            .map(Value::Int)
            .ok_or(EvalError::BigintOutOfRange("add")),
        Func::Sub => l
            .checked_sub(r)
            .map(Value::Int)
            .ok_or(EvalError::BigintOutOfRange("sub")),
        Func::Mul => l
            .checked_mul(r)
            .map(Value::Int)
            .ok_or(EvalError::BigintOutOfRange("mul")),
        Func::Div => int_div(func, l, r),
        Func::Eq => Ok(Value::Bool(l == r)),
        Func::Ne => Ok(Value::Bool(l != r)),
        Func::Lt => Ok(Value::Bool(l < r)),
        _ => Ok(Value::Bool(l <= r)),
    }
}

/// Integer `/` and `%` (C truncation), with pgbench's special case for `-1`.
#[inline]
fn int_div(func: Func, l: i64, r: i64) -> Result<Value, EvalError> {
    if r == 0 {
        return Err(EvalError::DivisionByZero);
    }
    if r == -1 {
        return if func == Func::Mod {
            Ok(Value::Int(0))
        } else {
            l.checked_neg()
                .map(Value::Int)
                .ok_or(EvalError::BigintOutOfRange("div"))
        };
    }
    Ok(Value::Int(if func == Func::Mod { l % r } else { l / r }))
}

/// `IS`: same type and same first byte of pgbench's value union.
fn is(l: Value, r: Value) -> bool {
    std::mem::discriminant(&l) == std::mem::discriminant(&r)
        && l.union_first_byte() == r.union_first_byte()
}

/// `abs()`: ints keep `INT64_MIN` as is (`-i` wraps); pgbench reads any non-int as a
/// double, so a boolean yields the double whose bits are 0 or 1.
fn abs(v: Value) -> Value {
    match v {
        Value::Int(i) => Value::Int(if i < 0 { i.wrapping_neg() } else { i }),
        Value::Double(d) => Value::Double(if d < 0.0 { -d } else { d }),
        Value::Bool(b) => Value::Double(f64::from_bits(u64::from(b))),
        Value::Null => Value::Double(0.0),
    }
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

/// `greatest()` / `least()`: double if any argument is double, else int; C's
/// `Min`/`Max` macros decide NaN cases.
fn extremum(least: bool, args: &[Value]) -> Result<Value, EvalError> {
    if args.iter().any(|v| matches!(v, Value::Double(_))) {
        let mut acc = args[0].to_double()?;
        for v in &args[1..] {
            let d = v.to_double()?;
            acc = if least {
                if acc < d {
                    acc
                } else {
                    d
                }
            } else if acc > d {
                acc
            } else {
                d
            };
        }
        Ok(Value::Double(acc))
    } else {
        let mut acc = args[0].to_int()?;
        for v in &args[1..] {
            let i = v.to_int()?;
            acc = if least { acc.min(i) } else { acc.max(i) };
        }
        Ok(Value::Int(acc))
    }
}

/// The four `random*()` functions, with pgbench's checks in its order.
#[inline]
fn random(func: Func, args: &[Value], rng: &mut Prng) -> Result<Value, EvalError> {
    let (min, max) = (args[0].to_int()?, args[1].to_int()?);
    if min > max {
        return Err(EvalError::EmptyRange);
    }
    if max
        .checked_sub(min)
        .and_then(|d| d.checked_add(1))
        .is_none()
    {
        return Err(EvalError::RangeTooLarge);
    }
    if func == Func::Random {
        return Ok(Value::Int(rng.int_range(min, max)));
    }
    let param = args[2].to_double()?;
    Ok(Value::Int(match func {
        Func::RandomGaussian => {
            if param < MIN_GAUSSIAN_PARAM {
                return Err(EvalError::GaussianParameter(param));
            }
            gaussian(rng, min, max, param)
        }
        Func::RandomZipfian => {
            // pgbench lets NaN through and then loops forever; refuse it instead.
            if !(MIN_ZIPFIAN_PARAM..=MAX_ZIPFIAN_PARAM).contains(&param) {
                return Err(EvalError::ZipfianParameter(param));
            }
            zipfian(rng, min, max, param)
        }
        _ => {
            if param <= 0.0 {
                return Err(EvalError::ExponentialParameter(param));
            }
            exponential(rng, min, max, param)
        }
    }))
}

/// C's `(int64) x` on x86-64: out-of-range values and NaN become `INT64_MIN`
/// (`cvttsd2si`'s "integer indefinite"), which pgbench reaches with NaN or infinite
/// distribution parameters.
#[inline]
fn c_trunc(x: f64) -> i64 {
    if (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&x) {
        x as i64
    } else {
        i64::MIN
    }
}

/// `getExponentialRand`: one draw.
pub fn exponential(rng: &mut Prng, min: i64, max: i64, param: f64) -> i64 {
    let cut = (-param).exp();
    let uniform = 1.0 - rng.double();
    let rand = -(cut + (1.0 - cut) * uniform).ln() / param;
    let n = max.wrapping_sub(min).wrapping_add(1) as f64;
    min.wrapping_add(c_trunc(n * rand))
}

/// `getGaussianRand`: Box-Muller draws until one falls in `[-param, param)`.
pub fn gaussian(rng: &mut Prng, min: i64, max: i64, param: f64) -> i64 {
    let stdev = loop {
        let z = rng.normal();
        if !(z < -param || z >= param) {
            break z;
        }
    };
    let rand = (stdev + param) / (param * 2.0);
    let n = max.wrapping_sub(min).wrapping_add(1) as f64;
    min.wrapping_add(c_trunc(n * rand))
}

/// `getZipfianRand` (Devroye's rejection method, `computeIterativeZipfian`): two
/// draws per attempt, none when the range has one value.
pub fn zipfian(rng: &mut Prng, min: i64, max: i64, s: f64) -> i64 {
    let n = max.wrapping_sub(min).wrapping_add(1);
    if n <= 1 {
        return min;
    }
    let b = 2.0f64.powf(s - 1.0);
    let x = loop {
        let u = rng.double();
        let v = rng.double();
        let x = u.powf(-1.0 / (s - 1.0)).floor();
        let t = (1.0 + 1.0 / x).powf(s - 1.0);
        if v * x * (t - 1.0) / (b - 1.0) <= t / b && x <= n as f64 {
            break x;
        }
    };
    min.wrapping_sub(1).wrapping_add(c_trunc(x))
}

/// FNV-1a over the 8 bytes of `val`, least significant first (`getHashFnv1a`).
pub fn hash_fnv1a(val: i64, seed: u64) -> i64 {
    const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;
    const FNV_OFFSET_BASIS: u64 = 0xcbf2_9ce4_8422_2325;
    let mut result = FNV_OFFSET_BASIS ^ seed;
    let mut val = val;
    for _ in 0..8 {
        let octet = (val & 0xff) as u64;
        // Arithmetic shift of the signed value, as in C.
        val >>= 8;
        result = (result ^ octet).wrapping_mul(FNV_PRIME);
    }
    result as i64
}

/// MurmurHash64A of one 8-byte key (`getHashMurmur2`); `hash()` is this one.
pub fn hash_murmur2(val: i64, seed: u64) -> i64 {
    const MM2_MUL: u64 = 0xc6a4_a793_5bd1_e995;
    const MM2_ROT: u32 = 47;
    let mut result = seed ^ MM2_MUL.wrapping_mul(8);
    let mut k = val as u64;
    k = k.wrapping_mul(MM2_MUL);
    k ^= k >> MM2_ROT;
    k = k.wrapping_mul(MM2_MUL);
    result ^= k;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result = result.wrapping_mul(MM2_MUL);
    result ^= result >> MM2_ROT;
    result as i64
}

/// `permute(val, size, seed)`: a seeded bijection of `[0, size)` (pgbench 14+). The
/// caller has rejected `size <= 0`.
pub fn permute(val: i64, size: i64, seed: i64) -> i64 {
    if size < 2 {
        return 0;
    }
    let mut rng = Prng::seed(seed as u64);
    let size = size as u64;
    let mut v = (val as u64) % size;
    // Work modulo the largest power of two <= size.
    let masklen = 63 - size.leading_zeros();
    let mask = (1u64 << masklen) - 1;
    for _ in 0..6 {
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        if v <= mask {
            v = (v.wrapping_mul(m) ^ r) & mask;
            v = ((v << 1) & mask) | (v >> (masklen - 1));
        }
        let m = (rng.next_u64() & mask) | 1;
        let r = rng.next_u64() & mask;
        let mut t = size - 1 - v;
        if t <= mask {
            t = (t.wrapping_mul(m) ^ r) & mask;
            t = ((t << 1) & mask) | (t >> (masklen - 1));
            v = size - 1 - t;
        }
        let r = rng.uniform_range(0, size - 1);
        v = (v.wrapping_add(r)) % size;
    }
    v as i64
}
