//! The statistics views `--server-stats` reads, and which columns each PostgreSQL
//! version has (13 to 19, by `server_version_num`). A view's query returns one row
//! of bigint counters, in the order of its columns, under PostgreSQL's own names.

/// One view as one server version has it.
pub struct View {
    pub name: &'static str,
    pub columns: Vec<&'static str>,
    /// `select` of the columns as bigints, one row.
    pub query: String,
}

const DATABASE: &[&str] = &[
    "xact_commit",
    "xact_rollback",
    "blks_read",
    "blks_hit",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "temp_files",
    "temp_bytes",
    "deadlocks",
    "conflicts",
];

fn select(name: &'static str, columns: Vec<&'static str>, from: &str) -> View {
    let list: Vec<String> = columns
        .iter()
        .map(|c| format!("coalesce({c}, 0)::bigint"))
        .collect();
    View {
        name,
        query: format!("select {} from {from}", list.join(", ")),
        columns,
    }
}

/// Sums of `columns` over the rows of `from`, one row.
fn sums(name: &'static str, columns: &[&'static str], from: &str) -> View {
    let list: Vec<String> = columns
        .iter()
        .map(|c| format!("coalesce(sum({c}), 0)::bigint"))
        .collect();
    View {
        name,
        columns: columns.to_vec(),
        query: format!("select {} from {from}", list.join(", ")),
    }
}

/// Notes of the views a server of `version` does not have.
pub fn missing(version: i64) -> Vec<String> {
    [(140_000, "pg_stat_wal", 14), (160_000, "pg_stat_io", 16)]
        .into_iter()
        .filter(|(from, ..)| version < *from)
        .map(|(_, name, major)| {
            format!("{name} left out: PostgreSQL {major} has it, this server is {version}")
        })
        .collect()
}

/// The views of a server of `version` (`server_version_num`).
pub fn views(version: i64) -> Vec<View> {
    let mut v = vec![select(
        "pg_stat_database",
        DATABASE.to_vec(),
        "pg_catalog.pg_stat_database where datname = current_database()",
    )];
    if version >= 140_000 {
        let mut wal = vec!["wal_records", "wal_fpi", "wal_bytes", "wal_buffers_full"];
        // 18 moved the write and sync counts to pg_stat_io.
        if version < 180_000 {
            wal.extend(["wal_write", "wal_sync"]);
        }
        v.push(select("pg_stat_wal", wal, "pg_catalog.pg_stat_wal"));
    }
    if version >= 170_000 {
        v.push(select(
            "pg_stat_checkpointer",
            vec!["num_timed", "num_requested", "buffers_written"],
            "pg_catalog.pg_stat_checkpointer",
        ));
        v.push(select(
            "pg_stat_bgwriter",
            vec!["buffers_clean", "maxwritten_clean", "buffers_alloc"],
            "pg_catalog.pg_stat_bgwriter",
        ));
    } else {
        v.push(select(
            "pg_stat_bgwriter",
            vec![
                "checkpoints_timed",
                "checkpoints_req",
                "buffers_checkpoint",
                "buffers_clean",
                "maxwritten_clean",
                "buffers_backend",
                "buffers_alloc",
            ],
            "pg_catalog.pg_stat_bgwriter",
        ));
    }
    // Sums over the run's database's tables (autovacuum inside the window).
    v.push(sums(
        "pg_stat_all_tables",
        &["autovacuum_count", "autoanalyze_count"],
        "pg_catalog.pg_stat_all_tables",
    ));
    if version >= 160_000 {
        // Relation objects only: their counts are all 8 kB blocks (18's WAL rows are not).
        v.push(sums(
            "pg_stat_io",
            pgbench_results::server::io::COLUMNS,
            "pg_catalog.pg_stat_io where object in ('relation', 'temp relation')",
        ));
    }
    v
}

/// The run's own backends in `pg_stat_activity`: of its database and application
/// name, client backends, not the sampler itself.
pub fn activity_query(application_name: &str) -> String {
    format!(
        "select state, wait_event_type, wait_event, count(*) \
         from pg_catalog.pg_stat_activity \
         where datname = current_database() and backend_type = 'client backend' \
         and pid <> pg_backend_pid() and application_name = '{}' \
         group by 1, 2, 3",
        application_name.replace('\'', "''")
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(version: i64) -> Vec<&'static str> {
        views(version).iter().map(|v| v.name).collect()
    }

    #[test]
    fn each_version_reads_the_views_it_has() {
        assert_eq!(
            names(130_000),
            ["pg_stat_database", "pg_stat_bgwriter", "pg_stat_all_tables"]
        );
        assert!(names(150_000).contains(&"pg_stat_wal"));
        assert!(!names(150_000).contains(&"pg_stat_io"));
        assert!(names(160_000).contains(&"pg_stat_io"));
        assert_eq!(missing(150_018).len(), 1);
        assert!(missing(160_000).is_empty());
        assert!(names(170_000).contains(&"pg_stat_checkpointer"));
        let wal = |v| {
            views(v)
                .into_iter()
                .find(|v| v.name == "pg_stat_wal")
                .unwrap()
        };
        assert!(wal(170_000).columns.contains(&"wal_sync"));
        assert!(!wal(180_000).columns.contains(&"wal_sync"));
        let bg = |v| {
            views(v)
                .into_iter()
                .find(|v| v.name == "pg_stat_bgwriter")
                .unwrap()
        };
        assert!(bg(160_000).columns.contains(&"checkpoints_req"));
        assert!(!bg(170_000).query.contains("checkpoints_req"));
    }

    #[test]
    fn the_application_name_is_quoted() {
        assert!(activity_query("a'b").contains("application_name = 'a''b'"));
    }
}
