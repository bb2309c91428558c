//! The pest grammar of backslash lines and expressions (`script.pest`): the derived
//! parser and its `Rule`s, a leaf that the command and expression parsers share.

/// The pest grammar of backslash lines and expressions.
#[derive(pest_derive::Parser)]
#[grammar = "script.pest"]
pub(crate) struct Grammar;
