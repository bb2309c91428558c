//! pgbench's builtin scripts (`-b NAME`, `-N`, `-S`, `--show-script`): their exact
//! texts, prefix lookup, and the `-b list` / `--show-script` texts (which pgbench writes
//! to stderr; the runner prints what these functions return).

use crate::ast::Script;
use crate::error::ScriptError;
use crate::parser::parse_script;

/// A builtin script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// The name `-b` matches against (`tpcb-like`).
    pub name: &'static str,
    /// What the report shows as the transaction type (`<builtin: TPC-B (sort of)>`).
    pub desc: &'static str,
    /// The script, as pgbench has it (`naccounts` etc. already expanded).
    pub text: &'static str,
}

/// The builtins, in pgbench's order (which `-b list` and error messages keep).
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "tpcb-like",
        desc: "<builtin: TPC-B (sort of)>",
        text: "\\set aid random(1, 100000 * :scale)\n\
               \\set bid random(1, 1 * :scale)\n\
               \\set tid random(1, 10 * :scale)\n\
               \\set delta random(-5000, 5000)\n\
               BEGIN;\n\
               UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
               SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
               UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
               UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
               INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
               END;\n",
    },
    Builtin {
        name: "simple-update",
        desc: "<builtin: simple update>",
        text: "\\set aid random(1, 100000 * :scale)\n\
               \\set bid random(1, 1 * :scale)\n\
               \\set tid random(1, 10 * :scale)\n\
               \\set delta random(-5000, 5000)\n\
               BEGIN;\n\
               UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
               SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
               INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
               END;\n",
    },
    Builtin {
        name: "select-only",
        desc: "<builtin: select only>",
        text: "\\set aid random(1, 100000 * :scale)\n\
               SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    },
];

impl Builtin {
    /// The parsed script (name = the builtin's name, desc = its description).
    pub fn script(&self) -> Script {
        // The texts above are constants covered by the tests; they always parse.
        parse_script(self.name, self.desc, self.text).expect("builtin scripts parse")
    }
}

/// pgbench's `findBuiltin`: the one builtin whose name starts with `prefix`.
pub fn find(prefix: &str) -> Result<&'static Builtin, ScriptError> {
    let mut matches = BUILTINS.iter().filter(|b| b.name.starts_with(prefix));
    match (matches.next(), matches.count()) {
        (Some(found), 0) => Ok(found),
        (None, _) => Err(ScriptError::BuiltinNotFound {
            name: prefix.to_string(),
            available: list_text(),
        }),
        (Some(_), others) => Err(ScriptError::BuiltinAmbiguous {
            count: others + 1,
            prefix: prefix.to_string(),
            available: list_text(),
        }),
    }
}

/// What `-b list` prints (and what follows a failed lookup): pgbench's
/// `listAvailableScripts`.
pub fn list_text() -> String {
    let mut out = String::from("Available builtin scripts:\n");
    for b in BUILTINS {
        out.push_str(&format!("  {:>13}: {}\n", b.name, b.desc));
    }
    out.push('\n');
    out
}

/// What `--show-script=NAME` prints: `-- name: desc`, the script, and a blank line.
pub fn show_script_text(b: &Builtin) -> String {
    format!("-- {}: {}\n{}\n", b.name, b.desc, b.text)
}
