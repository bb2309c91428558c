//! pgbench's script language, with no database, no clock and no I/O (a seed's time
//! and `/dev/urandom` are passed in to [`prng`]): the grammar and parser of scripts and
//! expressions, the evaluator with every built-in function ([`functions`]), pgbench's
//! random number generator (bit for bit), client variables, the C library's number
//! parsing and formatting as pgbench relies on it ([`cnum`]), and the builtin scripts.
//!
//! The runner parses scripts with [`parser`], evaluates `\set`/`\if` expressions with
//! [`eval`], and substitutes variables into SQL from [`variables`].

pub mod ast;
pub mod builtin;
pub mod cnum;
pub mod error;
pub mod eval;
pub mod functions;
pub mod parser;
pub mod prng;
pub mod sysbench;
pub mod value;
pub mod variables;

pub use error::ScriptError;
pub use parser::{parse_expression, parse_script};
/// `\setrandstr`'s random string, for the runner (an extension of the language).
pub use sysbench::rand_str;
