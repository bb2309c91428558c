//! Expressions compiled once per script for the client's every evaluation:
//! [`Compiled`]. The shapes generated scripts use over and over get a form of their
//! own that skips the tree walk's dispatch (`random(1, 4)`, `sb_special(1, 10000, 1,
//! 75, 12)`, `:tnum <= 2`, `:id + 99`), and calls of constants are folded where the
//! result cannot differ from pgbench's; everything else is the tree, evaluated by
//! [`super::evaluate`].
//!
//! What a compiled form gives is what the tree gives, error for error and draw for
//! draw: a call is folded only when it draws nothing, prints nothing and succeeds
//! (`1/0` stays, to fail when and as pgbench fails it), arguments are still read left
//! to right (an undefined variable is reported first), NULL still propagates, and the
//! function itself is [`apply`] as the tree walker applies it.

use super::{evaluate, EvalContext, EvalError, RECURSION_LIMIT};
use crate::ast::{Expr, Func, Value};
use crate::functions::{apply, random_bounds};
use crate::prng::Prng;
use crate::variables::Variables;

/// An expression ready to evaluate many times.
#[derive(Debug, Clone)]
pub struct Compiled {
    form: Form,
}

/// A call's argument that needs no evaluation of its own.
#[derive(Debug, Clone)]
enum Leaf {
    Const(Value),
    /// `:name`, read (and converted on first use) at each evaluation.
    Var(Box<str>),
}

#[derive(Debug, Clone)]
enum Form {
    /// A constant, or a call of constants folded.
    Const(Value),
    Var(Box<str>),
    /// A non-lazy function other than `IS` and `debug()` of constants and variables
    /// (at most [`MAX_LEAVES`]): NULL propagates, then [`apply`].
    Call {
        func: Func,
        args: Box<[Leaf]>,
    },
    /// `random(min, max)` with constant bounds that pass its checks: one draw.
    Random {
        min: i64,
        max: i64,
    },
    /// `sb_special(lb, ub, pct, res, iter)` with constant ints that pass its checks:
    /// its draws.
    SbSpecial(crate::sysbench::Special),
    /// Anything else, with its calls of constants folded.
    Tree(Expr),
}

/// The most arguments a [`Form::Call`] takes (`sb_special()` has five).
const MAX_LEAVES: usize = 6;

impl Compiled {
    /// Compiles `expr`.
    pub fn new(expr: &Expr) -> Compiled {
        // Folding recurses; a tree deeper than the tree walker's own recursion is
        // left as it is (no script writes one but to test that limit).
        let tree = if within_depth(expr, RECURSION_LIMIT) {
            fold(expr)
        } else {
            expr.clone()
        };
        Compiled { form: form(tree) }
    }

    /// Evaluates it for one client, as [`super::evaluate`] evaluates the tree.
    #[inline]
    pub fn evaluate(&self, ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
        match &self.form {
            Form::Const(v) => Ok(*v),
            Form::Var(name) => ctx.vars.value(name),
            Form::Call { func, args } => call(*func, args, ctx),
            Form::Random { min, max } => Ok(Value::Int(ctx.rng.int_range(*min, *max))),
            Form::SbSpecial(special) => Ok(Value::Int(special.draw(ctx.rng))),
            Form::Tree(expr) => evaluate(expr, ctx),
        }
    }
}

/// A [`Form::Call`]: arguments left to right, NULL propagation, the function.
#[inline]
fn call(func: Func, args: &[Leaf], ctx: &mut EvalContext<'_>) -> Result<Value, EvalError> {
    let mut vals = [Value::Null; MAX_LEAVES];
    let mut null = false;
    for (slot, arg) in vals.iter_mut().zip(args) {
        *slot = match arg {
            Leaf::Const(v) => *v,
            Leaf::Var(name) => ctx.vars.value(name)?,
        };
        null |= matches!(slot, Value::Null);
    }
    if null {
        return Ok(Value::Null);
    }
    apply(func, &vals[..args.len()], ctx.rng)
}

/// Whether no path from `expr` down is longer than `limit` nodes.
fn within_depth(expr: &Expr, limit: usize) -> bool {
    let mut pending = vec![(expr, 1)];
    while let Some((e, depth)) = pending.pop() {
        if depth > limit {
            return false;
        }
        if let Expr::Func { args, .. } = e {
            pending.extend(args.iter().map(|a| (a, depth + 1)));
        }
    }
    true
}

/// Functions whose result depends on their arguments alone, with nothing drawn or
/// printed: a call of constants to one of them is the same value every time.
fn is_pure(func: Func) -> bool {
    !matches!(
        func,
        Func::Random
            | Func::RandomExponential
            | Func::RandomGaussian
            | Func::RandomZipfian
            | Func::SbGaussian
            | Func::SbSpecial
            | Func::SbPareto
            | Func::Debug
    )
}

/// `expr` with every call of constants to a pure function that succeeds replaced by
/// its value (children first, so `2 * 3 + 1` is `7`). A call that fails is kept, to
/// fail at run time.
fn fold(expr: &Expr) -> Expr {
    let Expr::Func { func, args } = expr else {
        return expr.clone();
    };
    let args: Vec<Expr> = args.iter().map(fold).collect();
    let of_constants = args.iter().all(|a| matches!(a, Expr::Const(_)));
    let node = Expr::Func { func: *func, args };
    if !is_pure(*func) || !of_constants {
        return node;
    }
    // Pure calls of constants read no variable, draw nothing and print nothing.
    let (mut vars, mut rng, mut sink) = (Variables::new(), Prng::seed(0), std::io::sink());
    let mut ctx = EvalContext {
        vars: &mut vars,
        rng: &mut rng,
        script_index: 0,
        command_index: 0,
        debug_out: &mut sink,
    };
    match evaluate(&node, &mut ctx) {
        Ok(v) => Expr::Const(v),
        Err(_) => node,
    }
}

/// The form of a folded tree.
fn form(tree: Expr) -> Form {
    let (func, args) = match &tree {
        Expr::Const(v) => return Form::Const(*v),
        Expr::Var(name) => return Form::Var(name.as_str().into()),
        Expr::Func { func, args } => (*func, args),
    };
    let callable = !matches!(
        func,
        Func::And | Func::Or | Func::Case | Func::Is | Func::Debug
    ) && func.arity().accepts(args.len())
        && args.len() <= MAX_LEAVES;
    let leaves: Option<Vec<Leaf>> = args
        .iter()
        .map(|a| match a {
            Expr::Const(v) => Some(Leaf::Const(*v)),
            Expr::Var(name) => Some(Leaf::Var(name.as_str().into())),
            Expr::Func { .. } => None,
        })
        .collect();
    let Some(leaves) = leaves.filter(|_| callable) else {
        return Form::Tree(tree);
    };
    let ints: Option<Vec<i64>> = leaves
        .iter()
        .map(|l| match l {
            Leaf::Const(v) => v.to_int().ok(),
            Leaf::Var(_) => None,
        })
        .collect();
    match (func, ints.as_deref()) {
        (Func::Random, Some(&[min, max])) if random_bounds(min, max).is_ok() => {
            Form::Random { min, max }
        }
        (Func::SbSpecial, Some(&[lb, ub, pct, res, iter])) => {
            match crate::sysbench::Special::new(lb, ub, pct, res, iter) {
                Ok(special) => Form::SbSpecial(special),
                Err(_) => Form::Call {
                    func,
                    args: leaves.into(),
                },
            }
        }
        _ => Form::Call {
            func,
            args: leaves.into(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn int(i: i64) -> Expr {
        Expr::Const(Value::Int(i))
    }

    fn node(func: Func, args: Vec<Expr>) -> Expr {
        Expr::Func { func, args }
    }

    #[test]
    fn generated_shapes_get_their_own_forms() {
        let random = Compiled::new(&node(Func::Random, vec![int(1), int(4)]));
        assert!(matches!(random.form, Form::Random { min: 1, max: 4 }));
        let special = node(Func::SbSpecial, [1, 10000, 1, 75, 12].map(int).into());
        let compiled = Compiled::new(&special);
        assert!(matches!(compiled.form, Form::SbSpecial(_)));
        // a quarter of the draws gaussian, the rest in the middle band: both paths
        for seed in 0..64 {
            let walked = outcome(seed, |ctx| evaluate(&special, ctx));
            assert_eq!(outcome(seed, |ctx| compiled.evaluate(ctx)), walked);
        }
        let refused = node(Func::SbSpecial, [1, 10000, 1, 100, 12].map(int).into());
        assert!(matches!(Compiled::new(&refused).form, Form::Call { .. }));
        let le = node(Func::Le, vec![Expr::Var("tnum".into()), int(2)]);
        assert!(matches!(Compiled::new(&le).form, Form::Call { .. }));
        let folded = node(
            Func::Add,
            vec![node(Func::Mul, vec![int(2), int(3)]), int(1)],
        );
        assert!(matches!(
            Compiled::new(&folded).form,
            Form::Const(Value::Int(7))
        ));
    }

    #[test]
    fn failing_and_drawing_calls_are_not_folded() {
        let div = node(Func::Div, vec![int(1), int(0)]);
        assert!(matches!(Compiled::new(&div).form, Form::Call { .. }));
        let empty = node(Func::Random, vec![int(5), int(1)]);
        assert!(matches!(Compiled::new(&empty).form, Form::Call { .. }));
        let overflow = node(Func::Add, vec![int(i64::MAX), int(1)]);
        let nested = node(Func::Mul, vec![overflow, int(0)]);
        assert!(matches!(Compiled::new(&nested).form, Form::Tree(_)));
    }

    #[test]
    fn deep_trees_compile_and_run_on_a_small_stack() {
        let run = || {
            let mut chain = int(1);
            for _ in 0..100_000 {
                chain = node(Func::Add, vec![chain, Expr::Var("a".into())]);
            }
            let compiled = Compiled::new(&chain);
            assert!(outcome(0, |ctx| compiled.evaluate(ctx)).starts_with("Ok(Int(300001))"));
        };
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(run)
            .expect("thread")
            .join()
            .expect("no overflow");
    }

    /// A client with a variable of each kind: an int, a string that converts to an
    /// int, a NULL, a double, a boolean, a string that does not convert.
    fn client() -> Variables {
        let mut vars = Variables::new();
        vars.set_int("set", "a", 3).unwrap();
        vars.set_text("option", "b", "007").unwrap();
        vars.set_text("option", "n", "null").unwrap();
        vars.set_value("set", "d", Value::Double(1.5)).unwrap();
        vars.set_text("option", "t", "true").unwrap();
        vars.set_text("option", "bad", "x1").unwrap();
        vars
    }

    /// The result, the debug lines, the variables' values and the next draw after
    /// evaluating with `run`.
    fn outcome(
        seed: u64,
        run: impl FnOnce(&mut EvalContext<'_>) -> Result<Value, EvalError>,
    ) -> String {
        let (mut vars, mut rng, mut out) = (client(), Prng::seed(seed), Vec::new());
        let result = run(&mut EvalContext {
            vars: &mut vars,
            rng: &mut rng,
            script_index: 1,
            command_index: 2,
            debug_out: &mut out,
        });
        let values: Vec<_> = vars.iter().map(|v| v.typed_value()).collect();
        format!(
            "{result:?} {} {values:?} {}",
            String::from_utf8_lossy(&out),
            rng.next_u64()
        )
    }

    /// A node of `func` with `args` cut or padded to an argument count it accepts.
    fn fitted(func: Func, mut args: Vec<Expr>) -> Expr {
        use crate::functions::Arity;
        let n = match func.arity() {
            Arity::Exact(n) | Arity::OptionalSeed(n) => n,
            Arity::AtLeastOne => args.len().max(1),
            Arity::Case => (args.len().max(3) - 1) | 1,
        };
        args.resize_with(n, || int(1));
        node(func, args)
    }

    fn exprs() -> impl proptest::strategy::Strategy<Value = Expr> {
        use proptest::prelude::*;
        let consts = prop_oneof![
            (-3i64..20).prop_map(int),
            proptest::sample::select(vec![99, 100, 10_000, i64::MAX, i64::MIN, -100]).prop_map(int),
            proptest::sample::select(vec![0.0, 2.5, -1.5, f64::NAN, 1e300, 0.1])
                .prop_map(|d| Expr::Const(Value::Double(d))),
            any::<bool>().prop_map(|b| Expr::Const(Value::Bool(b))),
            Just(Expr::Const(Value::Null)),
        ];
        let vars = proptest::sample::select(vec!["a", "b", "n", "d", "t", "bad", "u"])
            .prop_map(|n| Expr::Var(n.into()));
        let leaf = prop_oneof![3 => consts, 1 => vars];
        let funcs: Vec<Func> = crate::functions::FUNCTIONS.iter().map(|d| d.func).collect();
        leaf.prop_recursive(4, 48, 6, move |inner| {
            (
                proptest::sample::select(funcs.clone()),
                proptest::collection::vec(inner, 0..7),
            )
                .prop_map(|(func, args)| fitted(func, args))
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(4000))]
        /// Compiled or walked, an expression gives the same value or error, the same
        /// debug lines, the same conversions of variables and the same draws.
        #[test]
        fn compiled_evaluates_as_the_tree(expr in exprs(), seed in 0u64..4) {
            let compiled = Compiled::new(&expr);
            let walked = outcome(seed, |ctx| evaluate(&expr, ctx));
            proptest::prop_assert_eq!(outcome(seed, |ctx| compiled.evaluate(ctx)), walked);
        }
    }
}
