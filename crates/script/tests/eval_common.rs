//! Test-only helpers shared by the `eval_*` tests (included with `#[path]`): a small
//! builder that turns pgbench expression text into `ast::Expr` with exprparse.y's
//! compilation rules, so the evaluator can be checked against stock pgbench's
//! recordings independently of the real parser, and a client set up the way pgbench
//! sets one up (`-D` variables, then `scale`, `client_id`, `default_seed`,
//! `random_seed`).
#![allow(dead_code)]

use pgbench_script::ast::{Expr, Func, Value};
use pgbench_script::eval::{evaluate, EvalContext, EvalError};
use pgbench_script::prng::{Prng, SeedPlan};
use pgbench_script::variables::{strtod, Variables};

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    /// `9223372036854775808`, valid only after unary minus.
    MaxIntPlusOne,
    Double(f64),
    Var(String),
    Ident(String),
    Op(&'static str),
}

fn lex(text: &str) -> Result<Vec<Tok>, String> {
    const OPS: [&str; 21] = [
        "<>", "!=", "<=", ">=", "<<", ">>", "+", "-", "*", "/", "%", "=", "<", ">", "|", "#", "&",
        "~", "(", ")", ",",
    ];
    let b = text.as_bytes();
    let mut toks = Vec::new();
    let mut i = 0;
    let is_alnum = |c: u8| c >= 0x80 || c == b'_' || c.is_ascii_alphanumeric();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            let start = i;
            while i < b.len() && b[i].is_ascii_digit() {
                i += 1;
            }
            let mut is_double = false;
            if i < b.len() && b[i] == b'.' {
                is_double = true;
                i += 1;
                while i < b.len() && b[i].is_ascii_digit() {
                    i += 1;
                }
            }
            if i < b.len() && (b[i] | 0x20) == b'e' {
                let mut j = i + 1;
                if j < b.len() && (b[j] == b'+' || b[j] == b'-') {
                    j += 1;
                }
                if j < b.len() && b[j].is_ascii_digit() {
                    while j < b.len() && b[j].is_ascii_digit() {
                        j += 1;
                    }
                    is_double = true;
                    i = j;
                }
            }
            let s = &text[start..i];
            if is_double {
                let d = strtod(s).map_err(|_| "double constant overflow".to_string())?;
                toks.push(Tok::Double(d));
            } else if s == "9223372036854775808" {
                toks.push(Tok::MaxIntPlusOne);
            } else {
                toks.push(Tok::Int(
                    s.parse()
                        .map_err(|_| "bigint constant overflow".to_string())?,
                ));
            }
        } else if c == b':' {
            let start = i + 1;
            i += 1;
            while i < b.len() && is_alnum(b[i]) {
                i += 1;
            }
            if i == start {
                return Err("unexpected character".into());
            }
            toks.push(Tok::Var(text[start..i].to_string()));
        } else if is_alnum(c) {
            let start = i;
            while i < b.len() && is_alnum(b[i]) {
                i += 1;
            }
            toks.push(Tok::Ident(text[start..i].to_ascii_lowercase()));
        } else if let Some(op) = OPS.iter().find(|op| text[i..].starts_with(**op)) {
            toks.push(Tok::Op(op));
            i += op.len();
        } else {
            return Err("unexpected character".into());
        }
    }
    Ok(toks)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

fn func(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func { func, args }
}

fn int(i: i64) -> Expr {
    Expr::Const(Value::Int(i))
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_kw(&mut self, kw: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Ident(w)) if w == kw) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_op(&mut self, op: &str) -> Result<(), String> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(format!("syntax error: expected {op} at token {}", self.pos))
        }
    }

    fn or(&mut self) -> Result<Expr, String> {
        let mut e = self.and()?;
        while self.eat_kw("or") {
            e = func(Func::Or, vec![e, self.and()?]);
        }
        Ok(e)
    }

    fn and(&mut self) -> Result<Expr, String> {
        let mut e = self.not()?;
        while self.eat_kw("and") {
            e = func(Func::And, vec![e, self.not()?]);
        }
        Ok(e)
    }

    fn not(&mut self) -> Result<Expr, String> {
        if self.eat_kw("not") {
            return Ok(func(Func::Not, vec![self.not()?]));
        }
        self.is()
    }

    fn is(&mut self) -> Result<Expr, String> {
        let e = self.cmp()?;
        let null = Expr::Const(Value::Null);
        if self.eat_kw("isnull") {
            return Ok(func(Func::Is, vec![e, null]));
        }
        if self.eat_kw("notnull") {
            return Ok(func(Func::Not, vec![func(Func::Is, vec![e, null])]));
        }
        if self.eat_kw("is") {
            let negate = self.eat_kw("not");
            let rhs = if self.eat_kw("null") {
                null
            } else if self.eat_kw("true") {
                Expr::Const(Value::Bool(true))
            } else if self.eat_kw("false") {
                Expr::Const(Value::Bool(false))
            } else {
                return Err("syntax error after IS".into());
            };
            let is = func(Func::Is, vec![e, rhs]);
            return Ok(if negate {
                func(Func::Not, vec![is])
            } else {
                is
            });
        }
        Ok(e)
    }

    fn cmp(&mut self) -> Result<Expr, String> {
        let l = self.bit()?;
        let op = match self.peek() {
            Some(Tok::Op(op @ ("=" | "<>" | "!=" | "<" | "<=" | ">" | ">="))) => *op,
            _ => return Ok(l),
        };
        self.pos += 1;
        let r = self.bit()?;
        if matches!(
            self.peek(),
            Some(Tok::Op("=" | "<>" | "!=" | "<" | "<=" | ">" | ">="))
        ) {
            return Err("syntax error: comparisons do not associate".into());
        }
        Ok(match op {
            "=" => func(Func::Eq, vec![l, r]),
            "<>" | "!=" => func(Func::Ne, vec![l, r]),
            "<" => func(Func::Lt, vec![l, r]),
            "<=" => func(Func::Le, vec![l, r]),
            ">" => func(Func::Lt, vec![r, l]),
            _ => func(Func::Le, vec![r, l]),
        })
    }

    /// Prefix `~` binds as loosely as the binary bit operators (exprparse.y quirk).
    fn bit_operand(&mut self) -> Result<Expr, String> {
        if self.eat_op("~") {
            return Ok(func(Func::BitXor, vec![int(-1), self.bit_operand()?]));
        }
        self.add()
    }

    fn bit(&mut self) -> Result<Expr, String> {
        let mut e = self.bit_operand()?;
        loop {
            let f = match self.peek() {
                Some(Tok::Op("&")) => Func::BitAnd,
                Some(Tok::Op("|")) => Func::BitOr,
                Some(Tok::Op("#")) => Func::BitXor,
                Some(Tok::Op("<<")) => Func::LShift,
                Some(Tok::Op(">>")) => Func::RShift,
                _ => return Ok(e),
            };
            self.pos += 1;
            e = func(f, vec![e, self.bit_operand()?]);
        }
    }

    fn add(&mut self) -> Result<Expr, String> {
        let mut e = self.mul()?;
        loop {
            let f = match self.peek() {
                Some(Tok::Op("+")) => Func::Add,
                Some(Tok::Op("-")) => Func::Sub,
                _ => return Ok(e),
            };
            self.pos += 1;
            e = func(f, vec![e, self.mul()?]);
        }
    }

    fn mul(&mut self) -> Result<Expr, String> {
        let mut e = self.unary()?;
        loop {
            let f = match self.peek() {
                Some(Tok::Op("*")) => Func::Mul,
                Some(Tok::Op("/")) => Func::Div,
                Some(Tok::Op("%")) => Func::Mod,
                _ => return Ok(e),
            };
            self.pos += 1;
            e = func(f, vec![e, self.unary()?]);
        }
    }

    fn unary(&mut self) -> Result<Expr, String> {
        if self.eat_op("+") {
            return self.unary();
        }
        if self.eat_op("-") {
            if self.peek() == Some(&Tok::MaxIntPlusOne) {
                self.pos += 1;
                return Ok(int(i64::MIN));
            }
            return Ok(func(Func::Sub, vec![int(0), self.unary()?]));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, String> {
        let tok = self.peek().cloned().ok_or("syntax error at end")?;
        self.pos += 1;
        match tok {
            Tok::Int(i) => Ok(int(i)),
            Tok::Double(d) => Ok(Expr::Const(Value::Double(d))),
            Tok::Var(name) => Ok(Expr::Var(name)),
            Tok::Op("(") => {
                let e = self.or()?;
                self.expect_op(")")?;
                Ok(e)
            }
            Tok::Ident(w) if w == "true" => Ok(Expr::Const(Value::Bool(true))),
            Tok::Ident(w) if w == "false" => Ok(Expr::Const(Value::Bool(false))),
            Tok::Ident(w) if w == "null" => Ok(Expr::Const(Value::Null)),
            Tok::Ident(w) if w == "case" => {
                let mut args = Vec::new();
                while self.eat_kw("when") {
                    args.push(self.or()?);
                    if !self.eat_kw("then") {
                        return Err("syntax error: THEN expected".into());
                    }
                    args.push(self.or()?);
                }
                if args.is_empty() {
                    return Err("syntax error: WHEN expected".into());
                }
                args.push(if self.eat_kw("else") {
                    self.or()?
                } else {
                    Expr::Const(Value::Null)
                });
                if !self.eat_kw("end") {
                    return Err("syntax error: END expected".into());
                }
                Ok(func(Func::Case, args))
            }
            Tok::Ident(name) => {
                self.expect_op("(")?;
                let mut args = Vec::new();
                if !self.eat_op(")") {
                    loop {
                        args.push(self.or()?);
                        if self.eat_op(")") {
                            break;
                        }
                        self.expect_op(",")?;
                    }
                }
                call(&name, args)
            }
            other => Err(format!("syntax error at {other:?}")),
        }
    }
}

/// A function call, with exprparse.y's arity checks and default-seed rewrite.
fn call(name: &str, mut args: Vec<Expr>) -> Result<Expr, String> {
    let (f, min, max) = match name {
        "abs" => (Func::Abs, 1, 1),
        "debug" => (Func::Debug, 1, 1),
        "double" => (Func::Double, 1, 1),
        "exp" => (Func::Exp, 1, 1),
        "greatest" => (Func::Greatest, 1, usize::MAX),
        "least" => (Func::Least, 1, usize::MAX),
        "hash" | "hash_murmur2" => (Func::HashMurmur2, 1, 2),
        "hash_fnv1a" => (Func::HashFnv1a, 1, 2),
        "int" => (Func::Int, 1, 1),
        "ln" => (Func::Ln, 1, 1),
        "mod" => (Func::Mod, 2, 2),
        "pi" => (Func::Pi, 0, 0),
        "pow" | "power" => (Func::Pow, 2, 2),
        "sqrt" => (Func::Sqrt, 1, 1),
        "random" => (Func::Random, 2, 2),
        "random_exponential" => (Func::RandomExponential, 3, 3),
        "random_gaussian" => (Func::RandomGaussian, 3, 3),
        "random_zipfian" => (Func::RandomZipfian, 3, 3),
        "permute" => (Func::Permute, 2, 3),
        _ => return Err(format!("unexpected function name ({name})")),
    };
    if args.len() < min || args.len() > max {
        return Err(format!("unexpected number of arguments ({name})"));
    }
    let wants_seed = matches!(f, Func::HashMurmur2 | Func::HashFnv1a) && args.len() == 1
        || f == Func::Permute && args.len() == 2;
    if wants_seed {
        args.push(Expr::Var("default_seed".into()));
    }
    Ok(func(f, args))
}

/// Builds the AST pgbench would for an expression (test-only stand-in for the parser).
pub fn build(text: &str) -> Result<Expr, String> {
    let mut p = Parser {
        toks: lex(text)?,
        pos: 0,
    };
    let e = p.or()?;
    if p.pos != p.toks.len() {
        return Err(format!("syntax error at token {}", p.pos));
    }
    Ok(e)
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
    let wrapped = func(Func::Debug, vec![expr.clone()]);
    let (r, out) = eval_in(&wrapped, client, 0, 1);
    let mut lines: Vec<String> = out.lines().map(str::to_string).collect();
    if let Err(e) = r {
        if !e.is_silent() {
            lines.push(format!("pgbench: error: {e}"));
        }
    }
    lines
}
