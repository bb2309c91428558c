//! The parsed form of a pgbench script: commands, SQL pieces and expressions.
//!
//! This is the contract between the parser (`parser`), the evaluator (`eval`) and the
//! runner. It mirrors pgbench.c's `Command` and exprparse.y's `PgBenchExpr`: every
//! operator is compiled to a function node, as pgbench does, so evaluation order and
//! NULL handling follow one code path.

use std::fmt;

/// A typed value of pgbench's expression language. There are no string values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    Int(i64),
    Double(f64),
}

/// An expression node. Operators are `Func` nodes, as in pgbench's `exprparse.y`.
///
/// A tree can be as deep as its line is long (`1+1+...+1` nests to the left), so
/// `Clone`, `PartialEq`, `Debug` and `Drop` walk it with a heap stack instead of
/// recursing (see the bottom of this module), and so does the evaluator.
pub enum Expr {
    /// A constant (integer, double, boolean or NULL).
    Const(Value),
    /// `:name`, looked up at evaluation time.
    Var(String),
    /// A function or operator applied to its arguments, evaluated left to right
    /// (lazy ones, `And`, `Or`, `Case`, evaluate only what they need).
    Func { func: Func, args: Vec<Expr> },
}

/// Every function and operator of pgbench's expression language. Each has a row in
/// [`crate::functions::FUNCTIONS`], which gives its name and arity.
///
/// The compilation rules of exprparse.y apply: `a > b` is `Lt(b, a)`, `a >= b` is
/// `Le(b, a)`, `-x` is `Sub(0, x)`, `~x` is `BitXor(-1, x)`, `x IS NOT NULL` is
/// `Not(Is(x, NULL))`, `x ISNULL` is `Is(x, NULL)`, `x NOTNULL` is `Not(Is(x, NULL))`,
/// `hash(v)` / `hash_*(v)` / `permute(i, n)` get `:default_seed` appended as their last
/// argument, and `CASE WHEN c1 THEN v1 ... [ELSE e] END` is `Case(c1, v1, ..., e)` with
/// `e = NULL` when there is no ELSE (always an odd number of arguments >= 3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Func {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    And,
    Or,
    Not,
    BitAnd,
    BitOr,
    BitXor,
    LShift,
    RShift,
    Is,
    Case,
    Abs,
    Debug,
    Double,
    Exp,
    Greatest,
    Least,
    HashFnv1a,
    HashMurmur2,
    Int,
    Ln,
    Pi,
    Pow,
    Sqrt,
    Random,
    RandomExponential,
    RandomGaussian,
    RandomZipfian,
    Permute,
    /// pgbench-rs extras: sysbench's `--rand-type` distributions.
    SbGaussian,
    SbSpecial,
    SbPareto,
}

/// One piece of an SQL command's text, split once at load time so that substitution
/// (simple mode) and `$n` numbering (extended/prepared) need no scanning at run time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SqlPiece {
    /// Literal SQL text.
    Text(String),
    /// A `:name` reference. In simple mode an undefined name is sent verbatim as
    /// `:name`; in extended/prepared mode each occurrence is one `$n` parameter.
    Var(String),
}

/// Where the result of an SQL command goes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum ResultTarget {
    /// Results are discarded.
    #[default]
    Discard,
    /// `\gset [prefix]`: the last result must have exactly one row.
    Gset { prefix: String },
    /// `\aset [prefix]`: every result with rows stores its last row.
    Aset { prefix: String },
}

/// An SQL command (possibly several statements joined by `\;`).
#[derive(Debug, Clone, PartialEq)]
pub struct SqlCommand {
    /// The command text as pgbench keeps it (`\;` became `;`, leading whitespace and
    /// `--` comment lines removed, the terminating `;` kept).
    pub text: String,
    /// `text` split at variable references.
    pub pieces: Vec<SqlPiece>,
    /// `\gset` / `\aset` merged into this command.
    pub target: ResultTarget,
}

impl SqlCommand {
    /// The text with every `:name` replaced by `$1, $2, ...` in order of occurrence,
    /// as pgbench sends it in extended and prepared mode.
    pub fn parameterized_text(&self) -> String {
        let mut out = String::with_capacity(self.text.len());
        let mut n = 0;
        for piece in &self.pieces {
            match piece {
                SqlPiece::Text(t) => out.push_str(t),
                SqlPiece::Var(_) => {
                    n += 1;
                    out.push('$');
                    out.push_str(&n.to_string());
                }
            }
        }
        out
    }

    /// The variable names of the `$n` parameters, in order.
    pub fn parameters(&self) -> impl Iterator<Item = &str> {
        self.pieces.iter().filter_map(|p| match p {
            SqlPiece::Var(name) => Some(name.as_str()),
            SqlPiece::Text(_) => None,
        })
    }
}

/// `\sleep` duration argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SleepArg {
    /// A constant, already in the unit given.
    Const(i64),
    /// `:name`: the variable's value, converted as pgbench's `atoi` does, at run time.
    Var(String),
}

/// An argument of `\shell` / `\setshell`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShellArg {
    /// Passed as written (`::x` was already turned into `:x`).
    Literal(String),
    /// `:name`, replaced by the variable's string form at run time.
    Var(String),
}

/// A backslash command.
#[derive(Debug, Clone, PartialEq)]
pub enum MetaCommand {
    Set {
        var: String,
        expr: Expr,
    },
    /// `\sleep N [us|ms|s]`; `unit_us` is 1, 1_000 or 1_000_000.
    Sleep {
        duration: SleepArg,
        unit_us: i64,
    },
    SetShell {
        var: String,
        command: String,
        args: Vec<ShellArg>,
    },
    Shell {
        command: String,
        args: Vec<ShellArg>,
    },
    /// pgbench-rs extra `\setrandstr var template`: sysbench's `sysbench.rand.string`
    /// (each `#` a random digit, each `@` a random letter) into a string variable.
    SetRandStr {
        var: String,
        template: String,
    },
    If(Expr),
    Elif(Expr),
    Else,
    Endif,
    StartPipeline,
    SyncPipeline,
    EndPipeline,
}

impl MetaCommand {
    /// The command word as pgbench names it in messages (`set`, `sleep`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            MetaCommand::Set { .. } => "set",
            MetaCommand::Sleep { .. } => "sleep",
            MetaCommand::SetShell { .. } => "setshell",
            MetaCommand::Shell { .. } => "shell",
            MetaCommand::SetRandStr { .. } => "setrandstr",
            MetaCommand::If(_) => "if",
            MetaCommand::Elif(_) => "elif",
            MetaCommand::Else => "else",
            MetaCommand::Endif => "endif",
            MetaCommand::StartPipeline => "startpipeline",
            MetaCommand::SyncPipeline => "syncpipeline",
            MetaCommand::EndPipeline => "endpipeline",
        }
    }

    /// `\if`, `\elif`, `\else` or `\endif`: a command that moves the `\if` stack.
    pub fn is_conditional(&self) -> bool {
        matches!(
            self,
            MetaCommand::If(_) | MetaCommand::Elif(_) | MetaCommand::Else | MetaCommand::Endif
        )
    }
}

/// What a command does.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandKind {
    Sql(SqlCommand),
    Meta(MetaCommand),
}

/// One command of a script, with what the `-r` report and error messages show of it.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// 1-based line of the script where the command starts.
    pub line: usize,
    /// pgbench's `first_line`: the first line of the command (at most 127 bytes, cut
    /// at the first newline); for meta-commands the whole backslash line, continuation
    /// lines included.
    pub first_line: String,
    pub kind: CommandKind,
}

/// A parsed script: a name, a description and its commands.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// The file name (`-` for stdin) or the builtin's name (`tpcb-like`).
    pub name: String,
    /// What the report shows as `transaction type:` / `SQL script N:`: the file name
    /// for a file, `<builtin: TPC-B (sort of)>` for a builtin.
    pub desc: String,
    pub commands: Vec<Command>,
}

impl Script {
    /// The variables its commands read (`:name` in SQL, an expression, a `\sleep` or
    /// a shell argument): what a `-D` or a sweep of one can change.
    pub fn variables_read(&self) -> std::collections::BTreeSet<String> {
        let mut read = std::collections::BTreeSet::new();
        for c in &self.commands {
            match &c.kind {
                CommandKind::Sql(sql) => read.extend(sql.pieces.iter().filter_map(|p| match p {
                    SqlPiece::Var(v) => Some(v.clone()),
                    SqlPiece::Text(_) => None,
                })),
                CommandKind::Meta(m) => match m {
                    MetaCommand::Set { expr, .. }
                    | MetaCommand::If(expr)
                    | MetaCommand::Elif(expr) => expr.variables_read(&mut read),
                    MetaCommand::Sleep {
                        duration: SleepArg::Var(v),
                        ..
                    } => {
                        read.insert(v.clone());
                    }
                    MetaCommand::SetShell { args, .. } | MetaCommand::Shell { args, .. } => read
                        .extend(args.iter().filter_map(|a| match a {
                            ShellArg::Var(v) => Some(v.clone()),
                            ShellArg::Literal(_) => None,
                        })),
                    _ => {}
                },
            }
        }
        read
    }
}

impl Expr {
    /// Adds the variables the expression reads to `read` (walked with a heap stack: a
    /// tree can be as deep as its line is long).
    pub fn variables_read(&self, read: &mut std::collections::BTreeSet<String>) {
        let mut pending = vec![self];
        while let Some(e) = pending.pop() {
            match e {
                Expr::Var(v) => {
                    read.insert(v.clone());
                }
                Expr::Func { args, .. } => pending.extend(args.iter()),
                Expr::Const(_) => {}
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Expression trees without recursion. A node whose children are leaves or parents of
// leaves is handled by the ordinary (shallow) recursion; deeper ones by a heap stack.

impl Expr {
    /// Whether every child is a leaf or has only leaves below it, so that recursing
    /// over this node goes at most three levels down.
    fn is_shallow(&self) -> bool {
        let Expr::Func { args, .. } = self else {
            return true;
        };
        args.iter().all(|a| match a {
            Expr::Func { args, .. } => args
                .iter()
                .all(|b| !matches!(b, Expr::Func { args, .. } if !args.is_empty())),
            _ => true,
        })
    }
}

impl Drop for Expr {
    fn drop(&mut self) {
        if self.is_shallow() {
            return;
        }
        let Expr::Func { args, .. } = self else {
            return;
        };
        // Children are moved out before they drop, so each drops with no children.
        let mut pending = std::mem::take(args);
        while let Some(mut node) = pending.pop() {
            if let Expr::Func { args, .. } = &mut node {
                pending.append(args);
            }
        }
    }
}

impl Clone for Expr {
    fn clone(&self) -> Self {
        match self {
            Expr::Const(v) => Expr::Const(*v),
            Expr::Var(name) => Expr::Var(name.clone()),
            Expr::Func { func, args } if self.is_shallow() => Expr::Func {
                func: *func,
                args: args.clone(),
            },
            Expr::Func { .. } => clone_deep(self),
        }
    }
}

/// Post-order copy: children are built onto `built`, then gathered by their parent.
fn clone_deep(root: &Expr) -> Expr {
    enum Step<'a> {
        Enter(&'a Expr),
        Gather(Func, usize),
    }
    let mut steps = vec![Step::Enter(root)];
    let mut built: Vec<Expr> = Vec::new();
    while let Some(step) = steps.pop() {
        match step {
            Step::Enter(Expr::Func { func, args }) => {
                steps.push(Step::Gather(*func, args.len()));
                steps.extend(args.iter().rev().map(Step::Enter));
            }
            Step::Enter(leaf) => built.push(leaf.clone()),
            Step::Gather(func, n) => {
                let args = built.split_off(built.len() - n);
                built.push(Expr::Func { func, args });
            }
        }
    }
    // The root's Gather (or leaf) always leaves exactly one tree.
    built.pop().unwrap_or(Expr::Const(Value::Null))
}

impl PartialEq for Expr {
    fn eq(&self, other: &Self) -> bool {
        let mut pending: Vec<(&Expr, &Expr)> = Vec::new();
        let (mut a, mut b) = (self, other);
        loop {
            match (a, b) {
                (Expr::Const(x), Expr::Const(y)) if x == y => {}
                (Expr::Var(x), Expr::Var(y)) if x == y => {}
                (Expr::Func { func: f, args: x }, Expr::Func { func: g, args: y })
                    if f == g && x.len() == y.len() =>
                {
                    pending.extend(x.iter().zip(y).rev());
                }
                _ => return false,
            }
            match pending.pop() {
                Some((x, y)) => (a, b) = (x, y),
                None => return true,
            }
        }
    }
}

/// The derived format (`Func { func: Add, args: [Const(Int(1)), Var("x")] }`),
/// written without recursion; `{:#?}` prints the same single line.
impl fmt::Debug for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        enum Step<'a> {
            Node(&'a Expr),
            Text(&'static str),
        }
        let mut steps = vec![Step::Node(self)];
        while let Some(step) = steps.pop() {
            match step {
                Step::Text(text) => f.write_str(text)?,
                Step::Node(Expr::Const(v)) => write!(f, "Const({v:?})")?,
                Step::Node(Expr::Var(name)) => write!(f, "Var({name:?})")?,
                Step::Node(Expr::Func { func, args }) => {
                    write!(f, "Func {{ func: {func:?}, args: [")?;
                    steps.push(Step::Text("] }"));
                    for (i, arg) in args.iter().enumerate().rev() {
                        steps.push(Step::Node(arg));
                        if i > 0 {
                            steps.push(Step::Text(", "));
                        }
                    }
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_variable_is_used_where_any_command_reads_it() {
        let script = |text: &str| crate::parser::parse_script("t", "t", text).unwrap();
        let s = script(
            "\\set a :b + 1\n\\sleep :c ms\n\\if :d > 0\nSELECT :e;\n\\endif\n\\shell echo :f\n",
        );
        // b to f read; a set, never read
        let read: Vec<String> = s.variables_read().into_iter().collect();
        assert_eq!(read, ["b", "c", "d", "e", "f"]);
        // deep as its line is long, without recursing
        let mut deep = std::collections::BTreeSet::new();
        chain(100_000).variables_read(&mut deep);
        assert!(deep.contains("v99999") && deep.len() == 100_000);
    }

    fn chain(n: usize) -> Expr {
        let mut e = Expr::Const(Value::Int(1));
        for i in 0..n {
            let leaf = Expr::Var(format!("v{i}"));
            e = Expr::Func {
                func: Func::Add,
                args: if i % 2 == 0 {
                    vec![e, leaf]
                } else {
                    vec![leaf, e]
                },
            };
        }
        e
    }

    #[test]
    fn deep_trees_clone_compare_print_and_drop_on_a_small_stack() {
        let run = || {
            let tree = chain(200_000);
            let copy = tree.clone();
            assert!(copy == tree);
            assert!(chain(199_999) != tree);
            let printed = format!("{:?}", chain(3));
            assert_eq!(
                printed,
                "Func { func: Add, args: [Func { func: Add, args: [Var(\"v1\"), Func { func: \
                 Add, args: [Const(Int(1)), Var(\"v0\")] }] }, Var(\"v2\")] }"
            );
            assert!(format!("{tree:?}").len() > 200_000);
            drop(tree);
            drop(copy);
        };
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(run)
            .expect("thread")
            .join()
            .expect("no overflow");
    }

    #[test]
    fn shallow_trees_compare_as_derived() {
        let a = chain(3);
        assert_eq!(a, a.clone());
        let Expr::Func { args, .. } = &a else {
            panic!()
        };
        assert_ne!(args[0], args[1]);
        assert_ne!(Expr::Const(Value::Int(1)), Expr::Const(Value::Double(1.0)));
        assert_ne!(Expr::Var("x".into()), Expr::Const(Value::Null));
    }
}
