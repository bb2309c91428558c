//! `pg_stat_io` (16 on) row by row, read when the window begins and ends: the
//! breakdown by `backend_type`, `object` and `context` of the totals the views read
//! every second.

use crate::bench::window::watched::Rows;
use pgbench_results::server::io::{IoRow, COLUMNS};

/// Every row of the view, its counters as bigints in [`COLUMNS`]' order.
pub fn query() -> String {
    let cols: Vec<String> = COLUMNS
        .iter()
        .map(|c| format!("coalesce({c}, 0)::bigint"))
        .collect();
    format!(
        "select backend_type, object, context, {} from pg_catalog.pg_stat_io",
        cols.join(", ")
    )
}

/// The rows of [`query`]'s answer.
pub fn parse(rows: &Rows) -> Vec<IoRow> {
    rows.iter()
        .map(|r| {
            let text = |i: usize| r.get(i).cloned().flatten().unwrap_or_default();
            IoRow {
                backend_type: text(0),
                object: text(1),
                context: text(2),
                counts: COLUMNS
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (c.to_string(), text(3 + i).parse().unwrap_or(0)))
                    .collect(),
            }
        })
        .collect()
}
