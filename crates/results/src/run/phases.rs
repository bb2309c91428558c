//! The phases of a run as the results file keeps them: the warm-up and the measured
//! part, in seconds from the clients' start.

use serde::{Deserialize, Serialize};

/// One phase of the run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PhaseSpan {
    /// `warm-up` or `measured`.
    pub name: String,
    /// Seconds from the clients' start.
    pub start_s: f64,
    pub end_s: f64,
}
