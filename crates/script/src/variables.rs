//! One client's variable table, as pgbench keeps it (`Variables` in pgbench.c).
//!
//! A variable holds a string (from `-D`, `\gset`, `\aset`), a typed value (from
//! `\set`, `\setshell`, the automatic variables), or both once the string has been
//! converted. Conversion is lazy, with pgbench's rules and messages, and happens the
//! first time an expression reads the variable. SQL substitution uses the string when
//! there is one (so `-D x=007` substitutes `007`), else the value's string form.
//!
//! This module does not substitute into SQL text (the runner walks
//! [`crate::ast::SqlPiece`]s and calls [`Variables::write_text`]) and does not
//! evaluate expressions (see [`crate::eval`]).

use std::cell::Cell;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::ast::Value;
use crate::cnum::{self, is_c_space, strtod, Strtoint64Error};
use crate::error::EvalError;

/// One named variable.
#[derive(Debug, Clone, PartialEq)]
pub struct Variable {
    name: Box<str>,
    /// pgbench's `svalue`; the buffer is kept (and reused) when `has_text` is false.
    text: String,
    has_text: bool,
    /// pgbench's `value`; `None` is `PGBT_NO_VALUE` (string not converted yet).
    value: Option<Value>,
}

impl Variable {
    /// The variable's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The string it was given (`-D`, `\gset`, `\aset`), if it was set from a string.
    pub fn text(&self) -> Option<&str> {
        self.has_text.then_some(self.text.as_str())
    }

    /// The typed value, if it was set from a value or already converted.
    pub fn typed_value(&self) -> Option<Value> {
        self.value
    }

    /// Appends the string form pgbench substitutes (`getVariable`): the given string,
    /// else the value as `NULL`, `true`/`false`, `%lld` or `%.15g`.
    #[inline]
    pub fn write_text(&self, out: &mut String) {
        match self.value {
            Some(v) if !self.has_text => v.write_text(out),
            _ => out.push_str(&self.text),
        }
    }
}

/// A client's variables, with lookup by name in constant time.
///
/// Variables are never removed, so an index from [`Variables::index_of`] stays valid
/// for the table's life (and for its clones, which the runner makes of client 0's
/// table for every client).
#[derive(Debug, Clone)]
pub struct Variables {
    vars: Vec<Variable>,
    index: HashMap<Box<str>, usize, BuildHasherDefault<Fnv1a>>,
    /// Where a name was last found, by a hash of the name: a guess, always checked
    /// against the name. A script reads the same few names over and over (a sysbench
    /// read-write transaction about 60 times), and a checked guess skips the scan past
    /// the automatic and `-D` variables: 4% of that transaction's instructions.
    memo: [Cell<u32>; MEMO_SLOTS],
}

impl Default for Variables {
    fn default() -> Variables {
        Variables {
            vars: Vec::new(),
            index: HashMap::default(),
            memo: std::array::from_fn(|_| Cell::new(0)),
        }
    }
}

impl Variables {
    /// An empty table.
    pub fn new() -> Variables {
        Variables::default()
    }

    /// Number of variables.
    pub fn len(&self) -> usize {
        self.vars.len()
    }

    /// Whether no variable is defined.
    pub fn is_empty(&self) -> bool {
        self.vars.is_empty()
    }

    /// The variables in order of creation.
    pub fn iter(&self) -> impl Iterator<Item = &Variable> {
        self.vars.iter()
    }

    /// Looks a variable up by name.
    #[inline]
    pub fn get(&self, name: &str) -> Option<&Variable> {
        self.find(name).map(|i| &self.vars[i])
    }

    /// The stable index of a variable, for callers that resolve names once.
    #[inline]
    pub fn index_of(&self, name: &str) -> Option<usize> {
        self.find(name)
    }

    /// Where `name` is: the memo's guess when it holds, else [`Variables::search`],
    /// whose answer becomes the next guess.
    #[inline]
    fn find(&self, name: &str) -> Option<usize> {
        let slot = &self.memo[memo_slot(name)];
        let guess = slot.get() as usize;
        if self
            .vars
            .get(guess)
            .is_some_and(|v| same_name(&v.name, name))
        {
            return Some(guess);
        }
        let found = self.search(name)?;
        if let Ok(i) = u32::try_from(found) {
            slot.set(i);
        }
        Some(found)
    }

    /// A scan of the names, shortest test first, while the table is small (a script's
    /// dozen variables: cheaper than hashing the name and comparing it through
    /// `memcmp`), the hash index beyond.
    #[inline(never)]
    fn search(&self, name: &str) -> Option<usize> {
        if self.vars.len() > SCAN_MAX {
            return self.index.get(name).copied();
        }
        self.vars.iter().position(|v| same_name(&v.name, name))
    }

    /// The variable at an index from [`Variables::index_of`].
    #[inline]
    pub fn get_index(&self, index: usize) -> Option<&Variable> {
        self.vars.get(index)
    }

    /// Appends the string form of `name` to `out` (for SQL, `\shell` arguments and
    /// `\sleep :v`); returns `false`, appending nothing, when it is undefined.
    #[inline]
    pub fn write_text(&self, name: &str, out: &mut String) -> bool {
        match self.get(name) {
            Some(var) => {
                var.write_text(out);
                true
            }
            None => false,
        }
    }

    /// Assigns a string (`putVariable`): `-D` (context `option`), `\gset` (`gset`),
    /// `\aset` (`aset`). The name is checked only when the variable is created.
    pub fn set_text(&mut self, context: &str, name: &str, text: &str) -> Result<(), EvalError> {
        let var = self.lookup_create(context, name)?;
        var.text.clear();
        var.text.push_str(text);
        var.has_text = true;
        var.value = None;
        Ok(())
    }

    /// Assigns a string written by `write` into the variable's own buffer (no
    /// allocation once the variable exists): pgbench-rs's `\setrandstr`.
    pub fn set_text_with(
        &mut self,
        context: &str,
        name: &str,
        write: impl FnOnce(&mut String),
    ) -> Result<(), EvalError> {
        let var = self.lookup_create(context, name)?;
        var.text.clear();
        write(&mut var.text);
        var.has_text = true;
        var.value = None;
        Ok(())
    }

    /// Assigns a typed value (`putVariableValue`): `\set` (context `set`), automatic
    /// variables (`startup`). No allocation once the variable exists.
    #[inline]
    pub fn set_value(&mut self, context: &str, name: &str, value: Value) -> Result<(), EvalError> {
        let var = self.lookup_create(context, name)?;
        var.has_text = false;
        var.value = Some(value);
        Ok(())
    }

    /// Assigns an int (`putVariableInt`): `\setshell`, `scale`, `client_id`, seeds.
    pub fn set_int(&mut self, context: &str, name: &str, value: i64) -> Result<(), EvalError> {
        self.set_value(context, name, Value::Int(value))
    }

    /// The typed value of `name` for an expression, converting its string on first
    /// use and keeping the result (pgbench's `makeVariableValue`).
    #[inline]
    pub fn value(&mut self, name: &str) -> Result<Value, EvalError> {
        let Some(i) = self.find(name) else {
            return Err(EvalError::UndefinedVariable(name.to_owned()));
        };
        let var = &mut self.vars[i];
        if let Some(v) = var.value {
            return Ok(v);
        }
        let v = parse_variable_value(&var.name, &var.text)?;
        var.value = Some(v);
        Ok(v)
    }

    fn lookup_create(&mut self, context: &str, name: &str) -> Result<&mut Variable, EvalError> {
        let i = match self.find(name) {
            Some(i) => i,
            None => {
                if !is_valid_name(name) {
                    return Err(EvalError::InvalidVariableName {
                        context: context.to_owned(),
                        name: name.to_owned(),
                    });
                }
                self.vars.push(Variable {
                    name: name.into(),
                    text: String::new(),
                    has_text: false,
                    value: None,
                });
                self.index.insert(name.into(), self.vars.len() - 1);
                self.vars.len() - 1
            }
        };
        Ok(&mut self.vars[i])
    }
}

/// Up to this many variables, lookups scan the names rather than hash them.
const SCAN_MAX: usize = 24;

/// Slots of [`Variables`]'s memo: many more than the names a script reads often, so
/// that few of them share one.
const MEMO_SLOTS: usize = 64;

/// A name's memo slot: its length and first and last bytes, mixed by a Fibonacci
/// multiply (cheaper than hashing every byte, which measured slower). The names
/// scripts use side by side (`aid`/`bid`/`tid`/`delta`; `tnum`, `id`, `id_end`, `c`,
/// `k`, `pad`) get slots of their own; two names that share one only cost each
/// other scans.
#[inline]
fn memo_slot(name: &str) -> usize {
    let b = name.as_bytes();
    let byte = |x: Option<&u8>| x.map_or(0, |&x| u32::from(x));
    let key = (b.len() as u32) << 16 | byte(b.first()) << 8 | byte(b.last());
    (key.wrapping_mul(0x9E37_79B1) >> (32 - MEMO_SLOTS.trailing_zeros())) as usize
}

/// Names compared byte by byte, length first: they are a few bytes long, too short
/// for `memcmp`'s call to pay.
#[inline]
fn same_name(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// pgbench's `valid_variable_name`: `[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*`.
pub fn is_valid_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    let first_ok =
        matches!(bytes.next(), Some(b) if b >= 0x80 || b == b'_' || b.is_ascii_alphabetic());
    first_ok && bytes.all(|b| b >= 0x80 || b == b'_' || b.is_ascii_alphanumeric())
}

/// Converts a variable's string to a value (`makeVariableValue`): `null`; prefixes of
/// `true`/`yes`/`false`/`no`, `on`, `off`, `of`; an integer; else a double.
pub fn parse_variable_value(name: &str, text: &str) -> Result<Value, EvalError> {
    if text.is_empty() {
        return Err(EvalError::EmptyValue(name.to_owned()));
    }
    let is_prefix_of = |word: &str| {
        text.len() <= word.len()
            && word.as_bytes()[..text.len()].eq_ignore_ascii_case(text.as_bytes())
    };
    if text.eq_ignore_ascii_case("null") {
        Ok(Value::Null)
    } else if is_prefix_of("true") || is_prefix_of("yes") || text.eq_ignore_ascii_case("on") {
        Ok(Value::Bool(true))
    } else if is_prefix_of("false")
        || is_prefix_of("no")
        || text.eq_ignore_ascii_case("off")
        || text.eq_ignore_ascii_case("of")
    {
        Ok(Value::Bool(false))
    } else if is_an_int(text) {
        strtoint64(text).map(Value::Int)
    } else {
        match strtod(text) {
            Ok(d) => Ok(Value::Double(d)),
            Err(_) => Err(EvalError::MalformedVariable {
                name: name.to_owned(),
                value: text.to_owned(),
            }),
        }
    }
}

/// pgbench's `is_an_int`: `^\s*[-+]?[0-9]*$` (it lets "no digit" through).
fn is_an_int(s: &str) -> bool {
    let s = s.trim_start_matches(is_c_space);
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    s.bytes().all(|b| b.is_ascii_digit())
}

/// pgbench's `strtoint64` with its errors reported.
fn strtoint64(s: &str) -> Result<i64, EvalError> {
    cnum::strtoint64(s).map_err(|e| match e {
        Strtoint64Error::Syntax => EvalError::InvalidBigint(s.to_owned()),
        Strtoint64Error::Range => EvalError::ValueOutOfRange(s.to_owned()),
    })
}

/// FNV-1a for the name index: names are short, so a simple byte hash beats SipHash.
#[derive(Default)]
struct Fnv1a(u64);

impl Hasher for Fnv1a {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.0 = h;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memo is a guess: names sharing a slot, a table grown past the scan, and a
    /// clone all still find the right variable.
    #[test]
    fn lookups_stay_right_whatever_the_memo_guessed() {
        let mut vars = Variables::new();
        let names: Vec<String> = (0..100).map(|i| format!("v{i}")).collect();
        // 100 names in 64 slots: some slots are shared
        assert!(distinct_slots(&names) < names.len());
        for (i, name) in names.iter().enumerate() {
            vars.set_int("set", name, i as i64).unwrap();
            // every earlier name, read again after each insert (the scan, then the
            // hash index once past SCAN_MAX, with guesses overwritten in between)
            for (j, earlier) in names[..=i].iter().enumerate().rev() {
                assert_eq!(vars.value(earlier).unwrap(), Value::Int(j as i64));
            }
        }
        let clone = vars.clone();
        for (i, name) in names.iter().enumerate() {
            assert_eq!(clone.index_of(name), Some(i));
        }
        assert_eq!(vars.index_of("v100"), None);
        assert_eq!(vars.index_of(""), None);
    }

    /// How many memo slots `names` fall into.
    fn distinct_slots(names: &[impl AsRef<str>]) -> usize {
        let mut slots: Vec<usize> = names.iter().map(|n| memo_slot(n.as_ref())).collect();
        slots.sort_unstable();
        slots.dedup();
        slots.len()
    }

    #[test]
    fn names_read_side_by_side_have_slots_of_their_own() {
        for names in [
            &["aid", "bid", "tid", "delta"][..],
            &["tnum", "id", "id_end", "c", "k", "pad"],
        ] {
            assert_eq!(distinct_slots(names), names.len(), "{names:?}");
        }
    }

    #[test]
    fn names_follow_valid_variable_name() {
        assert!(is_valid_name("aid"));
        assert!(is_valid_name("_x1"));
        assert!(is_valid_name("été"));
        assert!(!is_valid_name("1x"));
        assert!(!is_valid_name(""));
        assert!(!is_valid_name("a-b"));
    }
}
