//! The functions and operators of pgbench's expression language, written down once:
//! [`FUNCTIONS`] (pgbench's `PGBENCH_FUNCTIONS[]`: name, [`Func`], [`Arity`]), which the
//! parser reads to resolve and check calls and the evaluator reads for arities and
//! names; then every non-lazy function applied to already evaluated arguments, with
//! pgbench's exact semantics and error messages (`evalStandardFunc`), and the pure
//! algorithms behind them: the random distributions, `permute`, and the two hashes.
//!
//! Argument evaluation, the 16-argument limit, NULL propagation, the lazy
//! `AND`/`OR`/`CASE` and `debug()`'s output belong to [`crate::eval`]. Transcendental functions go through
//! Rust's `f64` methods, which call the platform libm (glibc's `exp`, `log`, `pow`,
//! `sin`) exactly as pgbench does, so results are bit-identical.

use crate::ast::{Func, Value};
use crate::cnum::trunc_to_i64;
use crate::error::{EvalError, SyntaxMessage};
use crate::prng::Prng;

/// pgbench's `MIN_GAUSSIAN_PARAM`.
pub const MIN_GAUSSIAN_PARAM: f64 = 2.0;
/// pgbench's `MIN_ZIPFIAN_PARAM`.
pub const MIN_ZIPFIAN_PARAM: f64 = 1.001;
/// pgbench's `MAX_ZIPFIAN_PARAM`.
pub const MAX_ZIPFIAN_PARAM: f64 = 1000.0;

/// How many arguments a function takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arity {
    Exact(usize),
    /// `least`, `greatest`: one or more.
    AtLeastOne,
    /// `hash*(v [, seed])`, `permute(i, size [, seed])`: this many once the parser has
    /// appended `:default_seed` to a call written without the last one.
    OptionalSeed(usize),
    /// `CASE`: WHEN/THEN pairs and the ELSE value, an odd number of at least 3.
    Case,
}

impl Arity {
    /// Whether a node with `nargs` arguments fits (after the parser's rewrites). The
    /// parser guarantees it; the evaluator checks it so that a hand-built tree never
    /// indexes out of bounds.
    #[inline]
    pub fn accepts(self, nargs: usize) -> bool {
        match self {
            Arity::Exact(n) | Arity::OptionalSeed(n) => nargs == n,
            Arity::AtLeastOne => nargs >= 1,
            Arity::Case => nargs >= 3 && nargs % 2 == 1,
        }
    }

    /// What exprparse.y's `make_func` says of a call written with `nargs` arguments,
    /// if it refuses it.
    pub fn check_call(self, nargs: usize) -> Option<SyntaxMessage> {
        let ok = match self {
            Arity::AtLeastOne => {
                return (nargs == 0).then_some(SyntaxMessage::AtLeastOneArgumentExpected);
            }
            Arity::OptionalSeed(n) => nargs + 1 == n || nargs == n,
            Arity::Exact(n) => nargs == n,
            Arity::Case => self.accepts(nargs),
        };
        (!ok).then_some(SyntaxMessage::UnexpectedNumberOfArguments)
    }

    /// Whether a call written with `nargs` arguments gets `:default_seed` appended.
    pub fn takes_default_seed(self, nargs: usize) -> bool {
        matches!(self, Arity::OptionalSeed(n) if nargs + 1 == n)
    }
}

/// One row of pgbench's `PGBENCH_FUNCTIONS[]`.
#[derive(Debug, Clone, Copy)]
pub struct FunctionDef {
    /// What scripts call it (matched without regard to ASCII case), and the name
    /// `unexpected number of arguments (%s)` gives. Operators go by their symbol and
    /// internal functions by a `!` name, which no script can write.
    pub name: &'static str,
    pub func: Func,
    pub arity: Arity,
}

const fn def(name: &'static str, func: Func, arity: Arity) -> FunctionDef {
    FunctionDef { name, func, arity }
}

/// Every function and operator, in pgbench's order except that the first row of a
/// [`Func`] is the one that names it (`pow` before `power`, `hash_murmur2` before
/// `hash`). The parser looks names up here ([`find_function`]) and the evaluator
/// takes arities and names from here ([`Func::arity`], [`Func::name`]).
pub const FUNCTIONS: &[FunctionDef] = &[
    def("+", Func::Add, Arity::Exact(2)),
    def("-", Func::Sub, Arity::Exact(2)),
    def("*", Func::Mul, Arity::Exact(2)),
    def("/", Func::Div, Arity::Exact(2)),
    def("mod", Func::Mod, Arity::Exact(2)),
    def("abs", Func::Abs, Arity::Exact(1)),
    def("least", Func::Least, Arity::AtLeastOne),
    def("greatest", Func::Greatest, Arity::AtLeastOne),
    def("debug", Func::Debug, Arity::Exact(1)),
    def("pi", Func::Pi, Arity::Exact(0)),
    def("sqrt", Func::Sqrt, Arity::Exact(1)),
    def("ln", Func::Ln, Arity::Exact(1)),
    def("exp", Func::Exp, Arity::Exact(1)),
    def("int", Func::Int, Arity::Exact(1)),
    def("double", Func::Double, Arity::Exact(1)),
    def("random", Func::Random, Arity::Exact(2)),
    def("random_gaussian", Func::RandomGaussian, Arity::Exact(3)),
    def(
        "random_exponential",
        Func::RandomExponential,
        Arity::Exact(3),
    ),
    def("random_zipfian", Func::RandomZipfian, Arity::Exact(3)),
    def("pow", Func::Pow, Arity::Exact(2)),
    def("power", Func::Pow, Arity::Exact(2)),
    def("!and", Func::And, Arity::Exact(2)),
    def("!or", Func::Or, Arity::Exact(2)),
    def("!not", Func::Not, Arity::Exact(1)),
    def("&", Func::BitAnd, Arity::Exact(2)),
    def("|", Func::BitOr, Arity::Exact(2)),
    def("#", Func::BitXor, Arity::Exact(2)),
    def("<<", Func::LShift, Arity::Exact(2)),
    def(">>", Func::RShift, Arity::Exact(2)),
    def("=", Func::Eq, Arity::Exact(2)),
    def("<>", Func::Ne, Arity::Exact(2)),
    def("<=", Func::Le, Arity::Exact(2)),
    def("<", Func::Lt, Arity::Exact(2)),
    def("!is", Func::Is, Arity::Exact(2)),
    def("!case_end", Func::Case, Arity::Case),
    def("hash_murmur2", Func::HashMurmur2, Arity::OptionalSeed(2)),
    def("hash", Func::HashMurmur2, Arity::OptionalSeed(2)),
    def("hash_fnv1a", Func::HashFnv1a, Arity::OptionalSeed(2)),
    def("permute", Func::Permute, Arity::OptionalSeed(3)),
    // pgbench-rs extras (not in pgbench): sysbench 1.0's distributions.
    def("sb_gaussian", Func::SbGaussian, Arity::Exact(3)),
    def("sb_special", Func::SbSpecial, Arity::Exact(5)),
    def("sb_pareto", Func::SbPareto, Arity::Exact(3)),
];

/// A function callable by name in a script (`pg_strcasecmp`, so ASCII case is
/// ignored); operators and internal functions are not found.
pub fn find_function(name: &str) -> Option<&'static FunctionDef> {
    FUNCTIONS
        .iter()
        .find(|f| f.name.as_bytes()[0].is_ascii_alphabetic() && f.name.eq_ignore_ascii_case(name))
}

/// One more than the largest `Func` discriminant in [`FUNCTIONS`].
const FUNC_COUNT: usize = {
    let mut count = 0;
    let mut i = 0;
    while i < FUNCTIONS.len() {
        if FUNCTIONS[i].func as usize >= count {
            count = FUNCTIONS[i].func as usize + 1;
        }
        i += 1;
    }
    count
};

/// The row naming each `Func` (its first), by discriminant.
const ROW_OF: [usize; FUNC_COUNT] = {
    let mut rows = [usize::MAX; FUNC_COUNT];
    let mut i = FUNCTIONS.len();
    while i > 0 {
        i -= 1;
        rows[FUNCTIONS[i].func as usize] = i;
    }
    let mut f = 0;
    while f < FUNC_COUNT {
        assert!(rows[f] != usize::MAX, "a Func has no row in FUNCTIONS");
        f += 1;
    }
    rows
};

/// Each `Func`'s arity, by discriminant: evaluation checks it on every call, so it is
/// one load, not a search.
const ARITY_OF: [Arity; FUNC_COUNT] = {
    let mut arities = [Arity::Exact(0); FUNC_COUNT];
    let mut f = 0;
    while f < FUNC_COUNT {
        arities[f] = FUNCTIONS[ROW_OF[f]].arity;
        f += 1;
    }
    arities
};

impl Func {
    /// The row of [`FUNCTIONS`] that names this function.
    pub fn def(self) -> &'static FunctionDef {
        &FUNCTIONS[ROW_OF[self as usize]]
    }

    /// The name pgbench's `PGBENCH_FUNCTIONS[]` gives it (operators by symbol,
    /// internal ones with a `!`), as in `unexpected number of arguments (%s)`.
    pub fn name(self) -> &'static str {
        self.def().name
    }

    /// How many arguments a node of this function has.
    #[inline]
    pub fn arity(self) -> Arity {
        ARITY_OF[self as usize]
    }
}

/// Applies a non-lazy function to its evaluated arguments (`evalStandardFunc` after
/// the argument loop), drawing from `rng` for `random*()`. NULL arguments must already
/// have been handled by the caller except for `IS` and `debug()`, and the arity must
/// satisfy [`Func::arity`]. `debug()` is the identity here: its line goes to the
/// client's debug stream, which the evaluator owns. Always inlined: the evaluator's
/// few call sites then dispatch on `func` once, with the arguments in registers.
#[inline(always)]
pub fn apply(func: Func, args: &[Value], rng: &mut Prng) -> Result<Value, EvalError> {
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
        Func::Debug => Ok(args[0]),
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
            random(func, args, rng)
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
        Func::SbGaussian | Func::SbSpecial | Func::SbPareto => sysbench_random(func, args, rng),
        // Lazy functions never reach here; answer as pgbench's arity check would.
        Func::And | Func::Or | Func::Case => Err(EvalError::ArgumentCount(func.name())),
    }
}

/// pgbench-rs's `sb_gaussian(lb, ub, iter)`, `sb_special(lb, ub, pct, res, iter)` and
/// `sb_pareto(lb, ub, h)`.
fn sysbench_random(func: Func, args: &[Value], rng: &mut Prng) -> Result<Value, EvalError> {
    use crate::sysbench;
    let (lb, ub) = (args[0].to_int()?, args[1].to_int()?);
    let v = match func {
        Func::SbGaussian => sysbench::gaussian(rng, lb, ub, args[2].to_int()?)?,
        Func::SbSpecial => sysbench::special(
            rng,
            lb,
            ub,
            args[2].to_int()?,
            args[3].to_int()?,
            args[4].to_int()?,
        )?,
        _ => sysbench::pareto(rng, lb, ub, args[2].to_double()?)?,
    };
    Ok(Value::Int(v))
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

/// The bounds of a `random*()` call, or pgbench's complaint about them: an empty range,
/// or one whose size does not fit an int64.
pub(crate) fn random_bounds(min: i64, max: i64) -> Result<(i64, i64), EvalError> {
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
    Ok((min, max))
}

/// The four `random*()` functions, with pgbench's checks in its order.
#[inline]
fn random(func: Func, args: &[Value], rng: &mut Prng) -> Result<Value, EvalError> {
    let (min, max) = random_bounds(args[0].to_int()?, args[1].to_int()?)?;
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

/// `getExponentialRand`: one draw.
pub fn exponential(rng: &mut Prng, min: i64, max: i64, param: f64) -> i64 {
    let cut = (-param).exp();
    let uniform = 1.0 - rng.double();
    let rand = -(cut + (1.0 - cut) * uniform).ln() / param;
    let n = max.wrapping_sub(min).wrapping_add(1) as f64;
    min.wrapping_add(trunc_to_i64(n * rand))
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
    min.wrapping_add(trunc_to_i64(n * rand))
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
    min.wrapping_sub(1).wrapping_add(trunc_to_i64(x))
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
