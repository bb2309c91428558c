//! The crate's errors, one enum per stage, whose messages are pgbench's text:
//! [`ScriptError`] (load time: everything pgbench reports while reading a script or
//! choosing a builtin, before any connection is made) and [`EvalError`] (run time:
//! evaluating an expression or assigning a variable).
//!
//! `Display` gives the text pgbench passes to `pg_log_error` (without the
//! `pgbench: error: ` prefix); [`ScriptError::render`] gives every line stock pgbench
//! writes to stderr for the error, prefix, source line and caret included.

use std::fmt;

use crate::cnum::FixedF;

/// The largest number of `:name` parameters an SQL command may have in extended and
/// prepared mode (pgbench's `MAX_ARGS - 1`).
pub const MAX_SQL_PARAMETERS: usize = 255;

/// An error found while loading a script or looking up a builtin.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ScriptError {
    /// pgbench's `syntax_error()`: a malformed backslash command or expression.
    #[error("{0}")]
    Syntax(Box<SyntaxError>),
    /// `CheckConditional()`: `\if` ... `\endif` are not properly nested. `command` is the
    /// 1-based index of the offending command (one past the last for a missing `\endif`).
    #[error("condition error in script \"{script}\" command {command}: {message}")]
    Condition {
        script: String,
        command: usize,
        message: ConditionMessage,
    },
    /// The script has no command at all.
    #[error("empty command list for script \"{script}\"")]
    EmptyCommandList { script: String },
    /// More than 255 `:name` references in one SQL command (extended/prepared mode only).
    #[error("statement has too many arguments (maximum is {MAX_SQL_PARAMETERS}): {sql}")]
    TooManyParameters { sql: String },
    /// `-b NAME` / `--show-script=NAME` matched no builtin script. `available` is the
    /// list pgbench prints after the message (`listAvailableScripts`).
    #[error("no builtin script found for name \"{name}\"")]
    BuiltinNotFound { name: String, available: String },
    /// `-b NAME` / `--show-script=NAME` is a prefix of several builtin scripts.
    #[error("ambiguous builtin name: {count} builtin scripts found for prefix \"{prefix}\"")]
    BuiltinAmbiguous {
        count: usize,
        prefix: String,
        available: String,
    },
}

impl ScriptError {
    /// Everything stock pgbench writes to stderr for this error, ending in `\n`: the
    /// `<progname>: error: ` line, then (syntax errors) the offending line and a caret,
    /// or (builtin lookups) the list of builtin scripts.
    pub fn render(&self, progname: &str) -> String {
        let mut out = format!("{progname}: error: {self}\n");
        match self {
            ScriptError::Syntax(syntax) => {
                if let Some(line) = &syntax.line {
                    out.push_str(line);
                    out.push('\n');
                    if let Some(column) = syntax.column {
                        // fprintf(stderr, "%*c error found here\n", column + 1, '^'); built by
                        // hand, as Rust's width parameter stops at 65535
                        out.extend(std::iter::repeat_n(' ', column));
                        out.push_str("^ error found here\n");
                    }
                }
            }
            ScriptError::BuiltinNotFound { available, .. }
            | ScriptError::BuiltinAmbiguous { available, .. } => out.push_str(available),
            ScriptError::Condition { .. }
            | ScriptError::EmptyCommandList { .. }
            | ScriptError::TooManyParameters { .. } => {}
        }
        out
    }

    /// The syntax error, if this is one.
    pub fn as_syntax(&self) -> Option<&SyntaxError> {
        match self {
            ScriptError::Syntax(syntax) => Some(syntax),
            _ => None,
        }
    }
}

impl From<SyntaxError> for ScriptError {
    fn from(error: SyntaxError) -> Self {
        ScriptError::Syntax(Box::new(error))
    }
}

/// The arguments of pgbench's `syntax_error(source, lineno, line, command, msg, more,
/// column)`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// The script's name (file path or builtin name).
    pub source: String,
    /// 1-based line of the backslash that starts the command.
    pub line_no: usize,
    /// The whole backslash line (continuations included), when pgbench prints it.
    pub line: Option<String>,
    /// The command word as written (`set`, `SLEEP`, ...), when known.
    pub command: Option<String>,
    pub message: SyntaxMessage,
    /// The `(...)` detail: the offending token, function name or word.
    pub detail: Option<String>,
    /// 0-based byte column of the caret, counted from the backslash.
    pub column: Option<usize>,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.source, self.line_no, self.message)?;
        if let Some(detail) = &self.detail {
            write!(f, " ({detail})")?;
        }
        if let (Some(column), None) = (self.column, &self.line) {
            write!(f, " at column {}", column + 1)?;
        }
        if let Some(command) = &self.command {
            write!(f, " in command \"{command}\"")?;
        }
        Ok(())
    }
}

/// The message of a syntax error, in pgbench's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyntaxMessage {
    /// bison could not continue the expression.
    SyntaxError,
    /// bison's parser stack is full (an expression nested about 10000 deep).
    MemoryExhausted,
    UnexpectedCharacter,
    BigintConstantOverflow,
    DoubleConstantOverflow,
    UnexpectedFunctionName,
    UnexpectedNumberOfArguments,
    AtLeastOneArgumentExpected,
    MissingArgument,
    TooManyArguments,
    InvalidSleepTime,
    UnrecognizedTimeUnit,
    MissingCommand,
    UnexpectedArgument,
    InvalidCommand,
    /// Also the message for a misplaced `\aset`.
    GsetMustFollowSql,
}

impl fmt::Display for SyntaxMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SyntaxMessage::SyntaxError => "syntax error",
            SyntaxMessage::MemoryExhausted => "memory exhausted",
            SyntaxMessage::UnexpectedCharacter => "unexpected character",
            SyntaxMessage::BigintConstantOverflow => "bigint constant overflow",
            SyntaxMessage::DoubleConstantOverflow => "double constant overflow",
            SyntaxMessage::UnexpectedFunctionName => "unexpected function name",
            SyntaxMessage::UnexpectedNumberOfArguments => "unexpected number of arguments",
            SyntaxMessage::AtLeastOneArgumentExpected => "at least one argument expected",
            SyntaxMessage::MissingArgument => "missing argument",
            SyntaxMessage::TooManyArguments => "too many arguments",
            SyntaxMessage::InvalidSleepTime => "invalid sleep time, must be an integer",
            SyntaxMessage::UnrecognizedTimeUnit => "unrecognized time unit, must be us, ms or s",
            SyntaxMessage::MissingCommand => "missing command",
            SyntaxMessage::UnexpectedArgument => "unexpected argument",
            SyntaxMessage::InvalidCommand => "invalid command",
            SyntaxMessage::GsetMustFollowSql => "\\gset must follow an SQL command",
        })
    }
}

/// What is wrong with the nesting of `\if` ... `\endif`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionMessage {
    ElifWithoutIf,
    ElifAfterElse,
    ElseWithoutIf,
    ElseAfterElse,
    EndifWithoutIf,
    IfWithoutEndif,
}

impl fmt::Display for ConditionMessage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ConditionMessage::ElifWithoutIf => "\\elif without matching \\if",
            ConditionMessage::ElifAfterElse => "\\elif after \\else",
            ConditionMessage::ElseWithoutIf => "\\else without matching \\if",
            ConditionMessage::ElseAfterElse => "\\else after \\else",
            ConditionMessage::EndifWithoutIf => "\\endif without matching \\if",
            ConditionMessage::IfWithoutEndif => "\\if without matching \\endif",
        })
    }
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
    #[error("double to int overflow for {}", f6(.0))]
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
    #[error("gaussian parameter must be at least 2.000000 (not {})", f6(.0))]
    GaussianParameter(f64),
    #[error("zipfian parameter must be in range [1.001, 1000] (not {})", f6(.0))]
    ZipfianParameter(f64),
    #[error("exponential parameter must be greater than zero (not {})", f6(.0))]
    ExponentialParameter(f64),
    #[error("permute size parameter must be greater than zero")]
    PermuteSize,
    /// pgbench-rs's `sb_*()` functions take sysbench's `uint32_t` bounds.
    #[error("sysbench random bounds must be within [0, 4294967295]")]
    SysbenchRange,
    #[error("sysbench random iterations must be at least 1 (not {0})")]
    SysbenchIterations(i64),
    #[error("sb_special() needs pct in [0, 100] and res in [0, 100)")]
    SysbenchSpecial,
    #[error("pareto parameter must be in range (0, 1) (not {})", f6(.0))]
    SysbenchPareto(f64),
    #[error("too many function arguments, maximum is 16")]
    TooManyArguments,
    /// Only for trees the parser would not build (it checks arity at load time).
    #[error("unexpected number of arguments ({0})")]
    ArgumentCount(&'static str),
}

/// `%f`, as pgbench prints doubles in these messages.
fn f6(d: &f64) -> FixedF {
    FixedF {
        value: *d,
        decimals: 6,
    }
}

impl EvalError {
    /// Whether pgbench prints nothing for this error (a variable holding `""`); the
    /// client is still aborted.
    pub fn is_silent(&self) -> bool {
        matches!(self, EvalError::EmptyValue(_))
    }
}
