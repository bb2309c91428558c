//! `compare` of sweeps and capacity searches (files with `capacity`), for
//! `compare` and `history compare`: point by point, with the gates at every point.

use super::error::VerbError;
use super::io::print;
use pgbench_results::compare::{Gate, GateFinding, Side};

/// `compare` of sweeps (or searches): point by point, the gates at every point.
pub fn comparison(
    sides: &[Side],
    groups: bool,
    gates: &[Gate],
) -> Result<Vec<GateFinding>, VerbError> {
    use pgbench_results::capacity::compare as sweeps;
    if groups {
        return Err(sweeps::SweepCompareError::Groups.into());
    }
    let files: Vec<(String, pgbench_results::ResultsFile)> = sides
        .iter()
        .map(|s| (s.label.clone(), s.runs[0].clone()))
        .collect();
    let comparison = sweeps::compare(&files)?;
    print(&sweeps::render(&comparison))?;
    Ok(gates
        .iter()
        .flat_map(|g| sweeps::check(g, &comparison))
        .collect())
}
