//! The check of a sweep's or search's steps as a whole: steps that never ran. Each
//! step is checked as a run of its own, but a sweep stopped before its last value (a
//! signal, a step that could not start, `--exit-on-abort`) has steps missing that no
//! step's own checks see: a step stopped in its warm-up is left out of the file, so
//! the steps kept looked complete (#43).

use super::{warning, Warning};
use crate::document::steps::{Capacity, Kind, Step};

/// The code of a sweep or search a signal stopped (as a run's).
pub const INTERRUPTED: &str = "interrupted";
/// The code of one that stopped early otherwise, or lacks steps it planned.
pub const INCOMPLETE: &str = "incomplete";

/// The warning for `capacity`'s steps, if some are missing.
pub fn check(capacity: &Capacity, steps: &[Step]) -> Option<Warning> {
    let what = match capacity.kind {
        Kind::Sweep => "sweep",
        Kind::Search => "search",
    };
    let planned = match capacity.kind {
        Kind::Sweep if !capacity.values.is_empty() => {
            Some(capacity.values.len() * capacity.repeat.max(1) as usize)
        }
        _ => None,
    };
    let mut figures = vec![("steps", steps.len() as f64)];
    figures.extend(planned.map(|p| ("planned_steps", p as f64)));
    if let Some(why) = &capacity.stopped {
        let code = match why.starts_with("interrupted") {
            true => INTERRUPTED,
            false => INCOMPLETE,
        };
        let lacks = match capacity.kind {
            Kind::Sweep => "its curve lacks the values it did not reach",
            Kind::Search => "the rate it found (if any) was not narrowed down as asked",
        };
        return Some(warning(
            code,
            format!(
                "the {what} stopped early ({why}), so {lacks}: run it again to its end before comparing it"
            ),
            &figures,
        ));
    }
    match planned {
        Some(p) if steps.len() < p => Some(warning(
            INCOMPLETE,
            format!(
                "the file holds {} of the {what}'s {p} steps, so its curve lacks values it planned: run it again to its end before comparing it",
                steps.len()
            ),
            &figures,
        )),
        None if steps.is_empty() => Some(warning(
            INCOMPLETE,
            format!("the file holds no step of the {what}, so there is nothing to compare: run it again"),
            &figures,
        )),
        _ => None,
    }
}
