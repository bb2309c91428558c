//! Writes the `pgbench_accounts` rows of a scale as COPY text files, one per loading
//! connection, with the generator `-i` itself uses (`init::rows::AccountRows`), so
//! `benches/init/ceiling.sh` can time the server loading exactly our rows with no
//! generation in the way: the ceiling our data phase is measured against.
//!
//! Usage: `copy-rows SCALE FILES DIR` writes `DIR/accounts.1` .. `DIR/accounts.FILES`,
//! consecutive `aid` ranges of equal size.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use pgbench_rs::init::rows::AccountRows;

/// Accounts per unit of scale, as in pgbench.
const ACCOUNTS: i64 = 100_000;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = match args.as_slice() {
        [scale, files, dir] => scale
            .parse::<i64>()
            .ok()
            .zip(files.parse::<i64>().ok())
            .filter(|&(s, f)| s > 0 && f > 0)
            .map(|(s, f)| (s, f, PathBuf::from(dir))),
        _ => None,
    };
    let Some((scale, files, dir)) = parsed else {
        eprintln!("usage: copy-rows SCALE FILES DIR (SCALE and FILES positive)");
        return ExitCode::from(2);
    };
    match write_files(scale, files, &dir) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("copy-rows: {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}

fn write_files(scale: i64, files: i64, dir: &std::path::Path) -> std::io::Result<()> {
    let total = scale * ACCOUNTS;
    for k in 0..files {
        let (first, last) = (total * k / files + 1, total * (k + 1) / files);
        let mut out = BufWriter::new(File::create(dir.join(format!("accounts.{}", k + 1)))?);
        let mut rows = AccountRows::new(first, last);
        let mut buf = Vec::with_capacity(1 << 20);
        while rows.remaining() > 0 {
            rows.write(&mut buf, 10_000);
            out.write_all(&buf)?;
            buf.clear();
        }
        out.flush()?;
    }
    Ok(())
}
