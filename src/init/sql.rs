//! The SQL text of every initialisation statement, built exactly as pgbench 15 builds it
//! (`initCreateTables`, `createPartitions`, `initCreatePKeys`, `initCreateFKeys`,
//! `initGenerateDataServerSide`), plus the COPY statements we use. Pure: no connection.

use super::options::{InitOptions, PartitionMethod};

/// Branches per scale unit (pgbench `nbranches`).
pub(crate) const BRANCHES: i64 = 1;
/// Tellers per scale unit (pgbench `ntellers`).
pub(crate) const TELLERS: i64 = 10;
/// Accounts per scale unit (pgbench `naccounts`).
pub(crate) const ACCOUNTS: i64 = 100_000;

/// The tables `g` and `G` fill, in the order they fill them.
pub(crate) const BRANCHES_TABLE: &str = "pgbench_branches";
pub(crate) const TELLERS_TABLE: &str = "pgbench_tellers";
pub(crate) const ACCOUNTS_TABLE: &str = "pgbench_accounts";

/// From this scale on, `aid` columns are `bigint` (pgbench `SCALE_32BIT_THRESHOLD`).
const SCALE_32BIT_THRESHOLD: i32 = 20_000;

/// `d`: one statement, tables in alphabetical order.
pub(crate) const DROP_TABLES: &str =
    "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// The truncate at the start of both data generation steps (`initTruncateTables`).
pub(crate) const TRUNCATE_TABLES: &str =
    "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers";

/// `f`: the five constraints, in pgbench's order.
pub(crate) const FOREIGN_KEYS: [&str; 5] = [
    "alter table pgbench_tellers add constraint pgbench_tellers_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_accounts add constraint pgbench_accounts_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_bid_fkey foreign key (bid) references pgbench_branches",
    "alter table pgbench_history add constraint pgbench_history_tid_fkey foreign key (tid) references pgbench_tellers",
    "alter table pgbench_history add constraint pgbench_history_aid_fkey foreign key (aid) references pgbench_accounts",
];

/// `v`: pgbench vacuums in this order.
pub(crate) const VACUUM_TABLES: [&str; 4] = [
    "pgbench_branches",
    "pgbench_tellers",
    "pgbench_accounts",
    "pgbench_history",
];

/// One of the four tables as `initCreateTables` describes it.
struct TableDdl {
    table: &'static str,
    small_columns: &'static str,
    big_columns: &'static str,
    declare_fillfactor: bool,
}

// pgbench: the column lists are passed verbatim, including the odd spacing of `aid    int`.
const TABLES: [TableDdl; 4] = [
    TableDdl {
        table: "pgbench_history",
        small_columns: "tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22)",
        big_columns: "tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)",
        declare_fillfactor: false,
    },
    TableDdl {
        table: "pgbench_tellers",
        small_columns: "tid int not null,bid int,tbalance int,filler char(84)",
        big_columns: "tid int not null,bid int,tbalance int,filler char(84)",
        declare_fillfactor: true,
    },
    TableDdl {
        table: "pgbench_accounts",
        small_columns: "aid    int not null,bid int,abalance int,filler char(84)",
        big_columns: "aid bigint not null,bid int,abalance int,filler char(84)",
        declare_fillfactor: true,
    },
    TableDdl {
        table: "pgbench_branches",
        small_columns: "bid int not null,bbalance int,filler char(88)",
        big_columns: "bid int not null,bbalance int,filler char(88)",
        declare_fillfactor: true,
    },
];

/// Quotes an identifier the way `PQescapeIdentifier` does: always in double quotes,
/// embedded double quotes doubled, case kept.
pub(crate) fn quote_identifier(name: &str) -> String {
    let mut quoted = String::with_capacity(name.len() + 2);
    quoted.push('"');
    for c in name.chars() {
        if c == '"' {
            quoted.push('"');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

fn unlogged(opts: &InitOptions) -> &'static str {
    if opts.unlogged_tables {
        " unlogged"
    } else {
        ""
    }
}

/// `t`: the four `create table` statements in pgbench's order.
pub(crate) fn create_tables(opts: &InitOptions) -> Vec<String> {
    TABLES
        .iter()
        .map(|ddl| {
            let columns = if opts.scale >= SCALE_32BIT_THRESHOLD {
                ddl.big_columns
            } else {
                ddl.small_columns
            };
            let mut sql = format!("create{} table {}({})", unlogged(opts), ddl.table, columns);
            let partitioned = ddl.table == "pgbench_accounts";
            match opts.partition_method {
                PartitionMethod::Range if partitioned => sql.push_str(" partition by range (aid)"),
                PartitionMethod::Hash if partitioned => sql.push_str(" partition by hash (aid)"),
                // pgbench: fillfactor is only expected on actual tables.
                _ if ddl.declare_fillfactor => {
                    sql.push_str(&format!(" with (fillfactor={})", opts.fillfactor))
                }
                _ => {}
            }
            if let Some(ts) = &opts.tablespace {
                sql.push_str(" tablespace ");
                sql.push_str(&quote_identifier(ts));
            }
            sql
        })
        .collect()
}

/// Rows of branches, tellers and accounts at this scale (the order of
/// [`server_side_inserts`]).
pub(crate) fn table_rows(scale: i32) -> [i64; 3] {
    let scale = i64::from(scale);
    [BRANCHES * scale, TELLERS * scale, ACCOUNTS * scale]
}

/// Rows of `pgbench_accounts` at this scale.
pub(crate) fn account_rows(scale: i32) -> i64 {
    ACCOUNTS * i64::from(scale)
}

/// The rows a range partition holds: `1..=part_size`, ... (pgbench `createPartitions`).
/// Partition numbers are 1-based; the first and last bounds are open in the DDL but the
/// generated `aid`s never leave `1..=account_rows`.
pub(crate) fn range_partition_rows(opts: &InitOptions, p: i32) -> (i64, i64) {
    let total = account_rows(opts.scale);
    let part_size = range_part_size(opts);
    let lo = (i64::from(p) - 1) * part_size + 1;
    let hi = if p < opts.partitions {
        i64::from(p) * part_size
    } else {
        total
    };
    (lo, hi.min(total))
}

fn range_part_size(opts: &InitOptions) -> i64 {
    let partitions = i64::from(opts.partitions.max(1));
    (account_rows(opts.scale) + partitions - 1) / partitions
}

/// `t` with `--partitions`: one `create table ... partition of` per partition.
pub(crate) fn create_partitions(opts: &InitOptions) -> Vec<String> {
    let part_size = range_part_size(opts);
    (1..=opts.partitions)
        .map(|p| {
            let mut sql = format!(
                "create{} table pgbench_accounts_{}\n  partition of pgbench_accounts\n",
                unlogged(opts),
                p
            );
            match opts.partition_method {
                PartitionMethod::Hash => sql.push_str(&format!(
                    "  for values with (modulus {}, remainder {})",
                    opts.partitions,
                    p - 1
                )),
                // pgbench: open-ended first and last partitions accept any valid key.
                PartitionMethod::Range | PartitionMethod::None => {
                    let from = if p == 1 {
                        "minvalue".to_string()
                    } else {
                        (i64::from(p - 1) * part_size + 1).to_string()
                    };
                    let to = if p < opts.partitions {
                        (i64::from(p) * part_size + 1).to_string()
                    } else {
                        "maxvalue".to_string()
                    };
                    sql.push_str(&format!("  for values from ({from}) to ({to})"));
                }
            }
            sql.push_str(&format!(" with (fillfactor={})", opts.fillfactor));
            sql
        })
        .collect()
}

/// `p`: the three primary keys, branches first, with the optional index tablespace.
pub(crate) fn primary_keys(opts: &InitOptions) -> Vec<String> {
    [
        "alter table pgbench_branches add primary key (bid)",
        "alter table pgbench_tellers add primary key (tid)",
        "alter table pgbench_accounts add primary key (aid)",
    ]
    .iter()
    .map(|base| match &opts.index_tablespace {
        Some(ts) => format!("{base} using index tablespace {}", quote_identifier(ts)),
        None => (*base).to_string(),
    })
    .collect()
}

/// `G`: the three `insert ... select ... generate_series` statements.
pub(crate) fn server_side_inserts(scale: i32) -> [String; 3] {
    let scale = i64::from(scale);
    [
        format!(
            "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, {}) as bid",
            BRANCHES * scale
        ),
        format!(
            "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / {} + 1, 0 from generate_series(1, {}) as tid",
            TELLERS,
            TELLERS * scale
        ),
        server_side_accounts(1, ACCOUNTS * scale),
    ]
}

/// The accounts insert of `G` for the rows `first..=last` (all of them on the stock path).
pub(crate) fn server_side_accounts(first: i64, last: i64) -> String {
    format!(
        "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / {ACCOUNTS} + 1, 0, '' from generate_series({first}, {last}) as aid"
    )
}

/// pgbench 15 inserts branches row by row with `(bid,bbalance)`; COPY with the same
/// column list stores the same rows (filler takes its default, NULL) in one round trip.
pub(crate) const COPY_BRANCHES: &str = "copy pgbench_branches(bid,bbalance) from stdin";
/// Same for tellers and `(tid,bid,tbalance)`.
pub(crate) const COPY_TELLERS: &str = "copy pgbench_tellers(tid,bid,tbalance) from stdin";

/// The accounts COPY of the stock path: `freeze on` for servers from 14 on when
/// `--partitions` is not used (pgbench 15 tests the option, not the table).
pub(crate) fn copy_accounts(partitions: i32, server_version_num: i32) -> &'static str {
    if partitions == 0 && server_version_num >= 140_000 {
        "copy pgbench_accounts from stdin with (freeze on)"
    } else {
        "copy pgbench_accounts from stdin"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> InitOptions {
        InitOptions::default()
    }

    #[test]
    fn default_tables_match_pgbench() {
        assert_eq!(
            create_tables(&opts()),
            [
                "create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))",
                "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)",
                "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)",
                "create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)",
            ]
        );
    }

    #[test]
    fn big_scale_unlogged_tablespace_partitioned() {
        let o = InitOptions {
            scale: 20_000,
            unlogged_tables: true,
            fillfactor: 90,
            tablespace: Some("my \"ts\"".into()),
            partitions: 2,
            partition_method: PartitionMethod::Hash,
            ..opts()
        };
        let t = create_tables(&o);
        assert_eq!(
            t[0],
            "create unlogged table pgbench_history(tid int,bid int,aid bigint,delta int,mtime timestamp,filler char(22)) tablespace \"my \"\"ts\"\"\""
        );
        assert_eq!(
            t[2],
            "create unlogged table pgbench_accounts(aid bigint not null,bid int,abalance int,filler char(84)) partition by hash (aid) tablespace \"my \"\"ts\"\"\""
        );
        assert_eq!(
            create_partitions(&o),
            [
                "create unlogged table pgbench_accounts_1\n  partition of pgbench_accounts\n  for values with (modulus 2, remainder 0) with (fillfactor=90)",
                "create unlogged table pgbench_accounts_2\n  partition of pgbench_accounts\n  for values with (modulus 2, remainder 1) with (fillfactor=90)",
            ]
        );
        assert!(create_tables(&InitOptions { scale: 19_999, ..o })[0].contains("aid    int"));
    }

    #[test]
    fn range_partitions_bounds() {
        let o = InitOptions {
            scale: 1,
            partitions: 3,
            partition_method: PartitionMethod::Range,
            ..opts()
        };
        assert_eq!(
            create_partitions(&o),
            [
                "create table pgbench_accounts_1\n  partition of pgbench_accounts\n  for values from (minvalue) to (33335) with (fillfactor=100)",
                "create table pgbench_accounts_2\n  partition of pgbench_accounts\n  for values from (33335) to (66669) with (fillfactor=100)",
                "create table pgbench_accounts_3\n  partition of pgbench_accounts\n  for values from (66669) to (maxvalue) with (fillfactor=100)",
            ]
        );
        assert_eq!(range_partition_rows(&o, 1), (1, 33334));
        assert_eq!(range_partition_rows(&o, 2), (33335, 66668));
        assert_eq!(range_partition_rows(&o, 3), (66669, 100000));
        assert_eq!(create_tables(&o)[2], "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) partition by range (aid)");
    }

    #[test]
    fn more_range_partitions_than_rows_leave_trailing_ones_empty() {
        let o = InitOptions {
            partitions: 300_000,
            partition_method: PartitionMethod::Range,
            ..opts()
        };
        assert_eq!(range_partition_rows(&o, 100_000), (100_000, 100_000));
        let (lo, hi) = range_partition_rows(&o, 100_001);
        assert!(lo > hi);
        let (lo, hi) = range_partition_rows(&o, 300_000);
        assert!(lo > hi);
    }

    #[test]
    fn primary_keys_with_index_tablespace() {
        assert_eq!(
            primary_keys(&InitOptions {
                index_tablespace: Some("Idx".into()),
                ..opts()
            })[2],
            "alter table pgbench_accounts add primary key (aid) using index tablespace \"Idx\""
        );
        assert_eq!(
            primary_keys(&opts())[0],
            "alter table pgbench_branches add primary key (bid)"
        );
    }

    #[test]
    fn server_side_sql() {
        let s = server_side_inserts(3);
        assert_eq!(s[0], "insert into pgbench_branches(bid,bbalance) select bid, 0 from generate_series(1, 3) as bid");
        assert_eq!(s[1], "insert into pgbench_tellers(tid,bid,tbalance) select tid, (tid - 1) / 10 + 1, 0 from generate_series(1, 30) as tid");
        assert_eq!(s[2], "insert into pgbench_accounts(aid,bid,abalance,filler) select aid, (aid - 1) / 100000 + 1, 0, '' from generate_series(1, 300000) as aid");
    }

    #[test]
    fn freeze_only_unpartitioned_on_14_and_later() {
        assert_eq!(
            copy_accounts(0, 150018),
            "copy pgbench_accounts from stdin with (freeze on)"
        );
        assert_eq!(copy_accounts(2, 150018), "copy pgbench_accounts from stdin");
        assert_eq!(copy_accounts(0, 130000), "copy pgbench_accounts from stdin");
    }
}
