//! Helpers shared by the `eval_*` tests: expression trees from text (through the
//! crate's parser) or by hand (a few constructors, for trees independent of the
//! parser or that it would never build), and a client set up the way pgbench sets one
//! up (`-D` variables, then `scale`, `client_id`, `default_seed`, `random_seed`).
#![allow(dead_code)]

use pgbench_script::ast::{Expr, Func, Value};
use pgbench_script::eval::{evaluate, EvalContext, EvalError};
use pgbench_script::prng::{Prng, SeedPlan};
use pgbench_script::variables::Variables;

/// The tree the crate's parser builds, or its error message.
pub fn parse(text: &str) -> Result<Expr, String> {
    pgbench_script::parse_expression(text).map_err(|e| e.to_string())
}

pub fn int(i: i64) -> Expr {
    Expr::Const(Value::Int(i))
}

pub fn double(d: f64) -> Expr {
    Expr::Const(Value::Double(d))
}

pub fn var(name: &str) -> Expr {
    Expr::Var(name.to_string())
}

pub fn call<const N: usize>(func: Func, args: [Expr; N]) -> Expr {
    Expr::Func {
        func,
        args: args.into(),
    }
}

/// The options of a stock run that matter to expressions.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    pub seed: u64,
    pub defines: Vec<(String, String)>,
    pub scale: Option<i64>,
    pub clients: usize,
    pub threads: usize,
}

impl RunOptions {
    /// Parses `--random-seed=N`, `-D name=value`, `-s N`, `-c N`, `-j N` words.
    pub fn parse(words: &[String], default_seed: u64) -> RunOptions {
        let mut o = RunOptions {
            seed: default_seed,
            clients: 1,
            threads: 1,
            ..RunOptions::default()
        };
        let mut it = words.iter();
        while let Some(w) = it.next() {
            if let Some(s) = w.strip_prefix("--random-seed=") {
                o.seed = s.parse().expect("numeric seed");
            } else if w == "-D" {
                let def = it.next().expect("-D value");
                let (n, v) = def.split_once('=').expect("name=value");
                o.defines.push((n.to_string(), v.to_string()));
            } else if w == "-s" {
                o.scale = Some(it.next().expect("-s value").parse().expect("scale"));
            } else if w == "-c" {
                o.clients = it.next().expect("-c value").parse().expect("clients");
            } else if w == "-j" {
                o.threads = it.next().expect("-j value").parse().expect("threads");
            }
        }
        o
    }
}

/// One simulated client: its variables and `cs_func_rs`.
pub struct Client {
    pub vars: Variables,
    pub rng: Prng,
}

/// Sets up every client as pgbench's main() does, and returns them with the plan.
pub fn clients(o: &RunOptions) -> (Vec<Client>, SeedPlan) {
    let mut base = Variables::new();
    for (n, v) in &o.defines {
        base.set_text("option", n, v).expect("valid -D");
    }
    let user_default_seed = base.get("default_seed").is_some();
    let plan = SeedPlan::new(o.seed, o.clients, o.threads, user_default_seed);
    let clients = plan
        .clients
        .iter()
        .enumerate()
        .map(|(i, rng)| {
            let mut vars = base.clone();
            if vars.get("scale").is_none() {
                vars.set_int("startup", "scale", o.scale.unwrap_or(1))
                    .unwrap();
            }
            if vars.get("client_id").is_none() {
                vars.set_int("startup", "client_id", i as i64).unwrap();
            }
            if let Some(seed) = plan.default_seed {
                vars.set_int("startup", "default_seed", seed).unwrap();
            }
            if vars.get("random_seed").is_none() {
                vars.set_int("startup", "random_seed", plan.random_seed)
                    .unwrap();
            }
            Client {
                vars,
                rng: rng.clone(),
            }
        })
        .collect();
    (clients, plan)
}

/// Evaluates as command `command` (1-based) of script `script`; returns the value and
/// what `debug()` printed, or the error.
pub fn eval_in(
    expr: &Expr,
    client: &mut Client,
    script: usize,
    command: usize,
) -> (Result<Value, EvalError>, String) {
    let mut out = Vec::new();
    let mut ctx = EvalContext {
        vars: &mut client.vars,
        rng: &mut client.rng,
        script_index: script,
        command_index: command,
        debug_out: &mut out,
    };
    let r = evaluate(expr, &mut ctx);
    (r, String::from_utf8(out).expect("utf-8 debug output"))
}

/// What stock pgbench prints on stderr for `\set x debug(EXPR)` as command 1 of script
/// 0: the debug lines, then `pgbench: error: <msg>` unless the error is silent.
pub fn stock_lines(expr: &Expr, client: &mut Client) -> Vec<String> {
    let wrapped = call(Func::Debug, [expr.clone()]);
    let (r, out) = eval_in(&wrapped, client, 0, 1);
    let mut lines: Vec<String> = out.lines().map(str::to_string).collect();
    if let Err(e) = r {
        if !e.is_silent() {
            lines.push(format!("pgbench: error: {e}"));
        }
    }
    lines
}
