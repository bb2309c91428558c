//! A streaming standby of a throwaway cluster (`pg_basebackup -R`), for the tests of
//! `--server-stats`' replication lag and `--reconnect`'s failover: a cluster like its
//! primary, on a socket of its own, that can be promoted.

use super::{run, Cluster, ClusterError, SUPERUSER};
use std::io::Write;
use std::process::Command;
use std::sync::Mutex;

impl Cluster {
    /// A streaming standby of this cluster, made with `pg_basebackup -R` (the
    /// primary's default `pg_hba.conf` lets local replication connections in): on a
    /// socket directory and port of its own, gone again when dropped. It connects as
    /// `application_name` `standby`.
    pub fn start_standby(&self) -> Result<Cluster, ClusterError> {
        let dir = tempfile::Builder::new()
            .prefix("pgbench-rs-standby-")
            .tempdir()?
            .keep();
        let standby = Cluster {
            dir: dir.clone(),
            data: dir.join("data"),
            port: self.port,
            tcp: false,
            bindir: self.bindir.clone(),
            tools: self.tools.clone(),
            runuser: self.runuser.clone(),
            watcher: Mutex::new(None),
            external: false,
        };
        if self.runuser.is_some() {
            run(
                "chown",
                Command::new("chown").arg(format!("{SUPERUSER}:")).arg(&dir),
            )?;
        }
        let mut backup = self.command(self.tools.join("pg_basebackup"));
        backup
            .arg("-h")
            .arg(&self.dir)
            .arg("-p")
            .arg(self.port.to_string())
            .args([
                "-U",
                SUPERUSER,
                "-R",
                "-X",
                "stream",
                "-c",
                "fast",
                "--no-sync",
                "-D",
            ])
            .arg(&standby.data);
        run("pg_basebackup", &mut backup)?;
        // The primary's settings came along; these win (the auto file, where -R wrote
        // primary_conninfo, is read last).
        let conf = format!(
            "\n# pgbench-rs standby\nlisten_addresses = ''\nunix_socket_directories = '{}'\n\
             primary_conninfo = 'host={} port={} user={SUPERUSER} application_name=standby'\n",
            dir.display(),
            self.dir.display(),
            self.port
        );
        std::fs::OpenOptions::new()
            .append(true)
            .open(standby.data.join("postgresql.auto.conf"))?
            .write_all(conf.as_bytes())?;
        standby.launch()?;
        Ok(standby)
    }

    /// Promotes this standby to a primary (`pg_ctl promote -w`): it returns once the
    /// server accepts read-write connections.
    pub fn promote(&self) -> Result<(), ClusterError> {
        self.pg_ctl(["promote", "-w"])
    }
}
