//! The recorded cases of `tests/data/parse/<kind>/`: a script `NAME.sql` each, with
//! companion files recorded from stock pgbench 15 by `scripts/record-stock-parse-errors.sh`
//! (`NAME.args`: its options; `NAME.stderr`, `NAME.stock`: what it printed).

use std::fs;
use std::path::{Path, PathBuf};

/// One recorded script.
pub struct Case {
    /// The file name, as pgbench names the script in its messages.
    pub name: String,
    pub text: String,
    path: PathBuf,
}

impl Case {
    /// The companion file with this extension, if it was recorded.
    pub fn companion(&self, extension: &str) -> Option<String> {
        fs::read_to_string(self.path.with_extension(extension)).ok()
    }
}

/// Every case of the folder, checking that at least `at_least` are there (a missing
/// folder or a bad checkout must not pass as zero failures).
pub fn cases(kind: &str, at_least: usize) -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/parse")
        .join(kind);
    let mut cases = Vec::new();
    for entry in fs::read_dir(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("directory entry").path();
        if path.extension().is_none_or(|e| e != "sql") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = fs::read_to_string(&path).expect("script");
        cases.push(Case { name, text, path });
    }
    assert!(
        cases.len() >= at_least,
        "only {} cases in {}",
        cases.len(),
        dir.display()
    );
    cases
}

/// Fails with every difference at once, so one run shows them all.
pub fn assert_no_failures(cases: usize, failures: &[String]) {
    assert!(
        failures.is_empty(),
        "{} of {cases} differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
