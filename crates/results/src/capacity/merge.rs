//! `pgbench-report merge` of sweeps: the workers of one `--worker=I/N --sweep` run
//! each wrote a sweep file, and every step was a run of all the workers together.
//! Step by step, the workers' step files are merged as `merge` merges runs; the merged
//! sweep holds the merged steps, and its top level the merged peak step. A worker
//! that stopped early is missing from the steps it did not run (those steps are
//! incomplete); steps of different values are refused. A search is never split over
//! workers, so there is none to merge.

use super::{Kind, Step};
use crate::document::ResultsFile;
use crate::merge::{self, MergeError, Merged, Note};

/// Whether `files` are sweeps (any has steps: then all must).
pub fn is_sweep(files: &[(String, ResultsFile)]) -> bool {
    files.iter().any(|(_, d)| d.capacity.is_some())
}

fn differs(first: &str, file: &str, field: &str, ours: String, theirs: String) -> MergeError {
    MergeError::Differs {
        first: first.to_string(),
        file: file.to_string(),
        field: field.to_string(),
        ours,
        theirs,
    }
}

/// Merges the workers' sweep files (named as given).
pub fn merge(files: &[(String, ResultsFile)]) -> Result<ResultsFile, MergeError> {
    merge_noting(files).map(|(doc, _)| doc)
}

/// [`merge()`], and a note of each section not combined: its steps' (once for all
/// the steps), and a clients sweep's values, which stay the first worker's `-c`.
pub fn merge_noting(
    files: &[(String, ResultsFile)],
) -> Result<(ResultsFile, Vec<Note>), MergeError> {
    let mut notes = Vec::new();
    let (first_name, first) = files.first().ok_or(MergeError::NoFiles)?;
    let Some(capacity) = first.capacity.clone() else {
        let (name, other) = files
            .iter()
            .find(|(_, d)| d.capacity.is_some())
            .ok_or(MergeError::NoFiles)?;
        let theirs = format!("{} steps", other.steps.len());
        return Err(differs(first_name, name, "steps", "none".into(), theirs));
    };
    for (name, d) in files {
        let Some(c) = &d.capacity else {
            let ours = format!("{} steps", first.steps.len());
            return Err(differs(first_name, name, "steps", ours, "none".into()));
        };
        if c.kind == Kind::Search {
            return Err(differs(
                first_name,
                name,
                "capacity.kind",
                "a sweep".into(),
                "a search, which is not run by workers".into(),
            ));
        }
        if (&c.parameter, &c.values, c.repeat)
            != (&capacity.parameter, &capacity.values, capacity.repeat)
        {
            let show = |c: &super::Capacity| {
                format!("{}={} x{}", c.parameter, c.values.join(","), c.repeat)
            };
            return Err(differs(
                first_name,
                name,
                "capacity",
                show(&capacity),
                show(c),
            ));
        }
    }
    let most = files.iter().map(|(_, d)| d.steps.len()).max().unwrap_or(0);
    let mut steps = Vec::new();
    for i in 0..most {
        let at: Vec<(String, &Step)> = files
            .iter()
            .filter_map(|(name, d)| Some((name.clone(), d.steps.get(i)?)))
            .collect();
        let (lead_name, lead) = &at[0];
        if let Some((name, s)) = at.iter().find(|(_, s)| s.value != lead.value) {
            let field = format!("steps[{i}].value");
            return Err(differs(
                lead_name,
                name,
                &field,
                lead.value.clone(),
                s.value.clone(),
            ));
        }
        let named: Vec<(String, ResultsFile)> = at
            .iter()
            .map(|(name, s)| (format!("{name} (step {})", s.step), s.file.clone()))
            .collect();
        let (file, step_notes) = merge::merge_noting(&named)?;
        for n in step_notes {
            if !notes.contains(&n) {
                notes.push(n);
            }
        }
        steps.push(Step {
            file,
            ..(*lead).clone()
        });
    }
    if capacity.parameter == "clients" {
        // The value labels the step as the workers were given it; the step's merged
        // file counts all their clients.
        let label: Merged<()> = Merged::FirstWorker(
            (),
            "a clients sweep's value is each worker's -c; each merged step ran all the workers' clients, as its options say",
        );
        label.note("steps' values", &mut notes);
    }
    let mut capacity = capacity;
    capacity.representative = super::peak_step(&capacity, &steps);
    let top = steps
        .iter()
        .find(|s| Some(s.step) == capacity.representative)
        .or(steps.first())
        .map(|s| s.file.clone())
        .ok_or(MergeError::NoFiles)?;
    let incomplete = steps
        .iter()
        .any(|s| s.file.merge.as_ref().is_some_and(|m| m.incomplete));
    let mut doc = top;
    if let Some(record) = doc.merge.as_mut() {
        record.incomplete |= incomplete;
    }
    doc.command_line = ["pgbench-report", "merge"]
        .iter()
        .map(|s| s.to_string())
        .chain(files.iter().map(|(f, _)| f.clone()))
        .collect();
    doc.capacity = Some(capacity);
    doc.steps = steps;
    Ok((doc, notes))
}
