//! The verbs' input and output: reading a results file (secrets masked), writing to
//! a file or stdout.

use super::error::VerbError;
use pgbench_results::ResultsFile;
use std::io::Write;

/// Writes to stdout; a closed pipe is not a panic.
pub fn print(text: &str) -> Result<(), VerbError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| VerbError::Write {
            file: "standard output".to_string(),
            message: pgbench_results::destination::strerror(&e),
        })
}

/// Reads a results file.
pub fn read_doc(path: &str) -> Result<ResultsFile, VerbError> {
    let text = std::fs::read_to_string(path).map_err(|e| VerbError::Read {
        file: path.to_string(),
        message: pgbench_results::destination::strerror(&e),
    })?;
    let mut doc = ResultsFile::from_json(&text).map_err(|source| VerbError::Document {
        file: path.to_string(),
        source,
    })?;
    // A file written before passwords were masked (or edited) is masked as it is read,
    // so that nothing this program writes or prints holds one.
    for arg in &mut doc.command_line {
        *arg = pgbench_wire::redact_secrets(arg);
    }
    if let Some(serde_json::Value::String(db)) = doc.options.get_mut("dbname") {
        *db = pgbench_wire::redact_secrets(db);
    }
    Ok(doc)
}

/// Writes `text` to `path`, or stdout for `-`.
pub fn write_out(path: &str, text: &str) -> Result<(), VerbError> {
    if path == "-" {
        return print(text);
    }
    pgbench_results::destination::write(path, text.as_bytes()).map_err(VerbError::Output)
}
