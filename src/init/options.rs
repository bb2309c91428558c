//! What `-i` is asked to do: the steps, the tables' shape and the connections, as the
//! command line validated them.

/// How `pgbench_accounts` is partitioned (`--partition-method`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PartitionMethod {
    /// Not partitioned.
    #[default]
    None,
    /// `partition by range (aid)`.
    Range,
    /// `partition by hash (aid)`.
    Hash,
}

/// Everything `-i` needs besides the connection, already validated by the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitOptions {
    /// Step letters from `dtgGvpf ` (`-I`, with `-n` and `--foreign-keys` applied).
    pub steps: String,
    /// `-s`: 1 branch, 10 tellers and 100,000 accounts per unit.
    pub scale: i32,
    /// `-F`: fillfactor of tellers, accounts (and its partitions) and branches.
    pub fillfactor: i32,
    /// `-q`: a progress line every 5 seconds instead of every 100,000 rows.
    pub quiet: bool,
    /// `--unlogged-tables`.
    pub unlogged_tables: bool,
    /// `--partitions`: 0 means not partitioned.
    pub partitions: i32,
    /// `--partition-method`; with `partitions` > 0, `None` means range as in pgbench.
    pub partition_method: PartitionMethod,
    /// `--tablespace` for the four tables.
    pub tablespace: Option<String>,
    /// `--index-tablespace` for the primary keys.
    pub index_tablespace: Option<String>,
    /// `-j` in init mode: connections for loading, vacuum and primary keys. `None` or 1
    /// is pgbench's one-connection behaviour (pgbench rejects `-j` with `-i`).
    pub jobs: Option<u32>,
    /// `--resume` and `--shard=K/N`: load in recorded units ([`super::resume`]).
    pub resumable: super::resume::Resumable,
}

impl Default for InitOptions {
    /// pgbench's defaults: steps `dtgvp`, scale 1, fillfactor 100, nothing else.
    fn default() -> InitOptions {
        InitOptions {
            steps: "dtgvp".into(),
            scale: 1,
            fillfactor: 100,
            quiet: false,
            unlogged_tables: false,
            partitions: 0,
            partition_method: PartitionMethod::None,
            tablespace: None,
            index_tablespace: None,
            jobs: None,
            resumable: super::resume::Resumable::default(),
        }
    }
}

impl InitOptions {
    /// The options as the steps use them: a partition method exactly when partitioned.
    pub(super) fn normalized(&self) -> InitOptions {
        let mut opts = self.clone();
        opts.partitions = opts.partitions.max(0);
        if opts.partitions == 0 {
            opts.partition_method = PartitionMethod::None;
        } else if opts.partition_method == PartitionMethod::None {
            opts.partition_method = PartitionMethod::Range;
        }
        opts
    }

    /// Connections to use for the parallel parts, if more than one.
    pub(super) fn parallel_jobs(&self) -> Option<usize> {
        match self.jobs {
            Some(n) if n > 1 => Some(n as usize),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts() -> InitOptions {
        InitOptions::default()
    }

    #[test]
    fn partitions_default_to_range() {
        let o = InitOptions {
            partitions: 4,
            ..opts()
        }
        .normalized();
        assert_eq!(o.partition_method, PartitionMethod::Range);
        let o = InitOptions {
            partition_method: PartitionMethod::Hash,
            ..opts()
        }
        .normalized();
        assert_eq!(o.partition_method, PartitionMethod::None);
    }

    #[test]
    fn one_job_is_stock_behaviour() {
        assert_eq!(opts().parallel_jobs(), None);
        assert_eq!(
            InitOptions {
                jobs: Some(1),
                ..opts()
            }
            .parallel_jobs(),
            None
        );
        assert_eq!(
            InitOptions {
                jobs: Some(3),
                ..opts()
            }
            .parallel_jobs(),
            Some(3)
        );
    }
}
