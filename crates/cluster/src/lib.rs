//! A throwaway local PostgreSQL cluster: `initdb` into a temporary directory, the server
//! on a private Unix socket (and optionally a free loopback TCP port), gone again when
//! the owner is done.
//!
//! Used by every test that needs a server ([`shared`], [`Cluster::fresh_database`]) and
//! by `pgbench-rs --temp-instance`. When run as root the server runs as the `postgres`
//! user, because `initdb` refuses to run as root.
//!
//! The server is supervised by a small shell watcher that reads its standard input: when
//! the pipe closes (the owning process exited, even by a panic or a signal), the watcher
//! stops the server and removes the directory. So a `'static` cluster never outlives
//! the test process, although statics are never dropped.

use std::ffi::OsStr;
use std::io::Write;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

mod standby;

/// What can go wrong while making, starting or talking to a cluster.
#[derive(Debug, thiserror::Error)]
pub enum ClusterError {
    #[error(
        "PostgreSQL server binaries (initdb, postgres) not found in $PG_BINDIR, PATH, \
         `pg_config --bindir` or /usr/lib/postgresql/*/bin; install them (Debian: apt-get \
         install postgresql)"
    )]
    NoBinaries,
    /// `$PG_BINDIR` was set: what it names is used or nothing is, never a guess.
    #[error(
        "$PG_BINDIR is \"{0}\", which has no PostgreSQL server binaries (initdb, postgres): \
         point it at a directory that has them, or unset it"
    )]
    BadPgBindir(String),
    #[error("{what} failed: {detail}")]
    Command { what: String, detail: String },
    /// A program to run was not where it was looked for.
    #[error("could not run {program} ({looked}): {detail}")]
    NotRun {
        program: String,
        looked: String,
        detail: String,
    },
    #[error("the server did not become ready within {0} s; its log:\n{1}")]
    NotReady(u64, String),
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// How to set up a private cluster.
#[derive(Debug, Clone, Default)]
pub struct ClusterOptions {
    /// Also listen on 127.0.0.1 on a free port.
    pub tcp: bool,
    /// The whole `pg_hba.conf`; `None` trusts every local and loopback connection.
    pub hba: Option<String>,
    /// Extra `postgresql.conf` settings, written after ours (so they win).
    pub config: Vec<(String, String)>,
    /// The server binaries (`initdb`, `postgres`, `pg_ctl`) to run; `None`: [`bindir`].
    /// The client programs (`psql`, `pg_isready`, `pg_basebackup`) come from here when
    /// it has them, else from [`bindir`] (a server-only package has none).
    pub bindir: Option<PathBuf>,
}

/// A running throwaway cluster. Dropping it stops the server and removes its directory.
pub struct Cluster {
    dir: PathBuf,
    data: PathBuf,
    port: u16,
    tcp: bool,
    bindir: PathBuf,
    /// Where the client programs are (see [`ClusterOptions::bindir`]).
    tools: PathBuf,
    /// `runuser`, to run the server as `postgres` when we are root.
    runuser: Option<PathBuf>,
    /// The watcher's stdin: closing it stops the server.
    watcher: Mutex<Option<(Child, ChildStdin)>>,
    /// Set when the cluster was started elsewhere (PGBENCH_TEST_HOST): never stopped here.
    external: bool,
}

/// The database superuser every cluster is made with.
pub const SUPERUSER: &str = "postgres";

/// The PostgreSQL server binaries: `$PG_BINDIR` (which must have them when it is set),
/// else the directory of `initdb` on PATH, `pg_config --bindir`, or the newest
/// `/usr/lib/postgresql/*/bin`.
pub fn bindir() -> Result<PathBuf, ClusterError> {
    let has_server = |dir: &Path| dir.join("initdb").is_file() && dir.join("postgres").is_file();
    if let Some(dir) = std::env::var_os("PG_BINDIR").filter(|d| !d.is_empty()) {
        let dir = PathBuf::from(dir);
        return match has_server(&dir) {
            true => Ok(dir),
            false => Err(ClusterError::BadPgBindir(dir.display().to_string())),
        };
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            // A PATH entry may hold symlinks to the real bindir (which also has psql,
            // pg_ctl and pg_isready): follow initdb to it.
            if let Some(real) = std::fs::canonicalize(dir.join("initdb"))
                .ok()
                .and_then(|p| p.parent().map(Path::to_path_buf))
            {
                if has_server(&real) {
                    return Ok(real);
                }
            }
        }
    }
    if let Ok(out) = Command::new("pg_config").arg("--bindir").output() {
        let dir = PathBuf::from(String::from_utf8_lossy(&out.stdout).trim());
        if out.status.success() && has_server(&dir) {
            return Ok(dir);
        }
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let v = e.file_name().to_str()?.parse::<u32>().ok()?;
            Some((v, e.path().join("bin")))
        })
        .filter(|(_, dir)| has_server(dir))
        .collect();
    versions.sort();
    versions
        .pop()
        .map(|(_, d)| d)
        .ok_or(ClusterError::NoBinaries)
}

/// Whether this process runs as root (then the server must run as `postgres`).
fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|euid| euid == "0"))
        })
        .unwrap_or(false)
}

/// `runuser` (util-linux): on PATH, else in `/usr/sbin` or `/sbin`, which a root shell
/// opened with `su` (not `su -`) leaves off PATH on Debian.
fn find_runuser() -> Result<PathBuf, ClusterError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin"].map(PathBuf::from))
        .collect();
    dirs.iter()
        .map(|d| d.join("runuser"))
        .find(|p| p.is_file())
        .ok_or_else(|| ClusterError::NotRun {
            program: "runuser".into(),
            looked: format!(
                "looked for it in PATH, /usr/sbin and /sbin; as root the server runs as user \
                 {SUPERUSER} through it"
            ),
            detail: "not found (Debian: apt-get install util-linux)".into(),
        })
}

/// Runs `cmd`; a program that cannot be started is named with the path tried.
fn run(what: &str, cmd: &mut Command) -> Result<Output, ClusterError> {
    let out = cmd.output().map_err(|e| ClusterError::NotRun {
        program: what.to_string(),
        looked: format!("as {}", Path::new(cmd.get_program()).display()),
        detail: e.to_string(),
    })?;
    if out.status.success() {
        Ok(out)
    } else {
        Err(ClusterError::Command {
            what: what.to_string(),
            detail: format!(
                "{}{}",
                String::from_utf8_lossy(&out.stderr),
                String::from_utf8_lossy(&out.stdout)
            ),
        })
    }
}

fn free_tcp_port() -> Result<u16, ClusterError> {
    Ok(TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

impl Cluster {
    /// Makes and starts a private cluster.
    pub fn start(opts: ClusterOptions) -> Result<Cluster, ClusterError> {
        let (bindir, tools) = match &opts.bindir {
            Some(dir) if dir.join("psql").is_file() => (dir.clone(), dir.clone()),
            Some(dir) => (dir.clone(), bindir()?),
            None => (bindir()?, bindir()?),
        };
        let runuser = running_as_root().then(find_runuser).transpose()?;
        let dir = tempfile::Builder::new()
            .prefix("pgbench-rs-cluster-")
            .tempdir()?
            .keep();
        let data = dir.join("data");
        let port = if opts.tcp {
            free_tcp_port()?
        } else {
            // The socket directory is private, so any port number will do.
            40000 + (std::process::id() % 20000) as u16
        };
        let cluster = Cluster {
            dir: dir.clone(),
            data: data.clone(),
            port,
            tcp: opts.tcp,
            bindir,
            tools,
            runuser: runuser.clone(),
            watcher: Mutex::new(None),
            external: false,
        };
        if runuser.is_some() {
            run(
                "chown",
                Command::new("chown").arg(format!("{SUPERUSER}:")).arg(&dir),
            )?;
        }
        let mut initdb = cluster.server_command("initdb");
        initdb
            .args(["-A", "trust", "-U", SUPERUSER, "--no-sync", "-E", "UTF8"])
            .args(["--locale=C", "--no-instructions", "-D"])
            .arg(&data);
        run("initdb", &mut initdb)?;

        let listen = if opts.tcp { "127.0.0.1" } else { "" };
        let mut conf = format!(
            "\n# pgbench-rs throwaway cluster\nlisten_addresses = '{listen}'\nport = {port}\n\
             unix_socket_directories = '{}'\nfsync = off\nsynchronous_commit = off\n\
             full_page_writes = off\nmax_connections = 600\nshared_buffers = 128MB\n\
             logging_collector = off\n",
            dir.display()
        );
        for (k, v) in &opts.config {
            conf.push_str(&format!("{k} = '{}'\n", v.replace('\'', "''")));
        }
        std::fs::OpenOptions::new()
            .append(true)
            .open(data.join("postgresql.conf"))?
            .write_all(conf.as_bytes())?;
        if let Some(hba) = &opts.hba {
            std::fs::write(data.join("pg_hba.conf"), hba)?;
        }
        cluster.launch()?;
        Ok(cluster)
    }

    /// A command running a server binary, as `postgres` when we are root.
    fn server_command(&self, program: &str) -> Command {
        self.command(self.bindir.join(program))
    }

    /// A command running `path`, as `postgres` when we are root.
    fn command(&self, path: PathBuf) -> Command {
        if let Some(runuser) = &self.runuser {
            let mut c = Command::new(runuser);
            c.args(["-u", SUPERUSER, "--"]).arg(path);
            c
        } else {
            Command::new(path)
        }
    }

    /// Starts the server under the watcher and waits until it accepts connections.
    fn launch(&self) -> Result<(), ClusterError> {
        let postgres = self.bindir.join("postgres");
        let runas = if let Some(runuser) = &self.runuser {
            format!("'{}' -u {SUPERUSER} -- ", runuser.display())
        } else {
            String::new()
        };
        // The watcher: start the server, wait for our end of the pipe to close, then stop
        // the server (fast shutdown through the postmaster's pid) and remove everything,
        // unless we said `keep` first (a restart). It ignores the signals a process
        // group gets on Ctrl-C or `timeout`, so that it still gets to clean up after its
        // owner is killed (the pipe then closes with nothing said).
        let script = format!(
            r#"trap '' INT TERM HUP
{runas}"$1" -D "$2" >"$3/server.log" 2>&1 &
said=$(cat)
if [ -f "$2/postmaster.pid" ]; then
  pid=$(head -n 1 "$2/postmaster.pid")
  kill -INT "$pid" 2>/dev/null
  i=0; while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i+1)); done
fi
[ "$said" = keep ] || rm -rf "$3"
"#
        );
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(script)
            .arg("watcher")
            .arg(&postgres)
            .arg(&self.data)
            .arg(&self.dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take().expect("piped stdin");
        *self.watcher.lock().unwrap_or_else(|e| e.into_inner()) = Some((child, stdin));
        self.wait_ready(Duration::from_secs(60))
    }

    fn wait_ready(&self, limit: Duration) -> Result<(), ClusterError> {
        let start = Instant::now();
        loop {
            let ok = Command::new(self.tools.join("pg_isready"))
                .arg("-q")
                .arg("-h")
                .arg(&self.dir)
                .arg("-p")
                .arg(self.port.to_string())
                .status()
                .map(|s| s.success())
                .unwrap_or(false);
            if ok {
                return Ok(());
            }
            if start.elapsed() > limit {
                let log = std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default();
                return Err(ClusterError::NotReady(limit.as_secs(), log));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The Unix socket directory (pass it as the host).
    pub fn socket_dir(&self) -> &Path {
        &self.dir
    }

    /// The port (of the socket name, and of 127.0.0.1 when started with `tcp`).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Whether the server also listens on 127.0.0.1.
    pub fn has_tcp(&self) -> bool {
        self.tcp
    }

    /// The superuser name.
    pub fn user(&self) -> &str {
        SUPERUSER
    }

    /// The data directory.
    pub fn data_dir(&self) -> &Path {
        &self.data
    }

    /// The directory of the server binaries this cluster runs.
    pub fn bindir(&self) -> &Path {
        &self.bindir
    }

    /// The server's log so far.
    pub fn server_log(&self) -> String {
        std::fs::read_to_string(self.dir.join("server.log")).unwrap_or_default()
    }

    /// Runs SQL with psql and returns its unaligned, tuples-only output.
    pub fn psql(&self, db: &str, sql: &str) -> Result<String, ClusterError> {
        let mut child = Command::new(self.tools.join("psql"))
            .args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1", "-h"])
            .arg(&self.dir)
            .arg("-p")
            .arg(self.port.to_string())
            .args(["-U", SUPERUSER, "-d", db, "-f", "-"])
            .env_remove("PGSERVICE")
            .env_remove("PGOPTIONS")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()?;
        child
            .stdin
            .take()
            .expect("piped stdin")
            .write_all(sql.as_bytes())?;
        let out = child.wait_with_output()?;
        if !out.status.success() {
            return Err(ClusterError::Command {
                what: format!("psql {sql:?}"),
                detail: String::from_utf8_lossy(&out.stderr).into_owned(),
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// Creates an empty database named after `name` (`t_<name>`, dropped first if it
    /// exists) and returns its name, so tests never see each other's tables.
    pub fn fresh_database(&self, name: &str) -> Result<String, ClusterError> {
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '_'
                }
            })
            .collect();
        let db = format!("t_{clean}");
        self.psql(
            "postgres",
            &format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE);\nCREATE DATABASE \"{db}\";\n"),
        )?;
        Ok(db)
    }

    /// Writes a file into the data directory, owned by the server's user, mode 0600
    /// (what the server demands of key files).
    pub fn write_data_file(&self, name: &str, contents: &[u8]) -> Result<PathBuf, ClusterError> {
        use std::os::unix::fs::PermissionsExt;
        let path = self.data.join(name);
        std::fs::write(&path, contents)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600))?;
        if self.runuser.is_some() {
            run(
                "chown",
                Command::new("chown")
                    .arg(format!("{SUPERUSER}:"))
                    .arg(&path),
            )?;
        }
        Ok(path)
    }

    fn pg_ctl<I, S>(&self, args: I) -> Result<(), ClusterError>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.server_command("pg_ctl");
        cmd.arg("-D").arg(&self.data).arg("-s").args(args);
        run("pg_ctl", &mut cmd).map(|_| ())
    }

    /// Makes the server re-read its configuration files (`pg_hba.conf` included).
    pub fn reload(&self) -> Result<(), ClusterError> {
        self.pg_ctl(["reload"])
    }

    /// Stops the server at once, as a crash would (clients see their connection drop);
    /// [`Cluster::restart`] brings it back.
    pub fn stop_immediate(&self) -> Result<(), ClusterError> {
        self.pg_ctl(["stop", "-m", "immediate", "-w"])
    }

    /// Stops the server (if running) and starts it again with the same settings.
    pub fn restart(&self) -> Result<(), ClusterError> {
        let _ = self.pg_ctl(["stop", "-m", "fast", "-w"]);
        self.end_watcher(false);
        self.launch()
    }

    /// Closes the watcher's pipe, so it stops the server; waits for it.
    fn end_watcher(&self, remove: bool) {
        let taken = self
            .watcher
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some((mut child, mut stdin)) = taken {
            if !remove {
                use std::io::Write;
                let _ = stdin.write_all(b"keep");
            }
            drop(stdin);
            let _ = child.wait();
        }
        if remove {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    /// Stops the server and removes the cluster.
    pub fn stop(self) {
        drop(self)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if !self.external {
            self.end_watcher(true);
        }
    }
}

/// The cluster shared by all tests of one test process, started on first use.
///
/// With `PGBENCH_TEST_HOST` (a socket directory) and `PGBENCH_TEST_PORT` set, an
/// already running server is used instead, and left running, to save the start-up
/// when running a few tests again and again. It is one started by hand with its data
/// directory in `$PGBENCH_TEST_HOST/data`, its socket in `$PGBENCH_TEST_HOST` and its
/// log in `$PGBENCH_TEST_HOST/server.log`; as user postgres: `initdb -D DIR/data`,
/// then `pg_ctl -D DIR/data -l DIR/server.log -o "-k DIR -p PORT -c autovacuum=off"`
/// (autovacuum off, as in the cluster started here).
///
/// # Panics
/// When no cluster can be started: every test that asks for one needs it.
pub fn shared() -> &'static Cluster {
    static SHARED: OnceLock<Cluster> = OnceLock::new();
    SHARED.get_or_init(|| {
        if let (Some(host), Some(port)) = (
            std::env::var_os("PGBENCH_TEST_HOST"),
            std::env::var("PGBENCH_TEST_PORT").ok(),
        ) {
            let dir = PathBuf::from(host);
            return Cluster {
                data: dir.join("data"),
                dir,
                port: port
                    .parse()
                    .expect("PGBENCH_TEST_PORT must be a port number"),
                tcp: false,
                bindir: bindir().expect("PostgreSQL binaries"),
                tools: bindir().expect("PostgreSQL binaries"),
                runuser: running_as_root()
                    .then(find_runuser)
                    .transpose()
                    .expect("runuser"),
                watcher: Mutex::new(None),
                external: true,
            };
        }
        // Golden tests compare what vacuum and analyze leave (reltuples, statistics);
        // autovacuum, woken by the rows a test loads, rewrites those at a moment no
        // test controls. Seen: a partition's reltuples 27 rows short after a run, once
        // an autovacuum skipping all-visible pages estimated it.
        Cluster::start(ClusterOptions {
            config: vec![("autovacuum".into(), "off".into())],
            ..ClusterOptions::default()
        })
        .unwrap_or_else(|e| panic!("cannot start the test cluster: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_cluster_runs_without_autovacuum() {
        let c = shared();
        let db = c.fresh_database("no autovacuum").unwrap();
        assert_eq!(c.psql(&db, "show autovacuum").unwrap().trim(), "off");
    }

    #[test]
    fn shared_cluster_runs_sql_in_fresh_databases() {
        let c = shared();
        let db = c.fresh_database("Cluster Self-Test").unwrap();
        assert_eq!(db, "t_cluster_self_test");
        c.psql(&db, "create table t(x int); insert into t values (41);")
            .unwrap();
        assert_eq!(c.psql(&db, "select x + 1 from t").unwrap().trim(), "42");
        // A fresh database with the same name starts empty again.
        let db = c.fresh_database("Cluster Self-Test").unwrap();
        assert!(c.psql(&db, "select * from t").is_err());
    }

    #[test]
    fn private_cluster_listens_on_tcp_and_goes_away() {
        let c = Cluster::start(ClusterOptions {
            tcp: true,
            config: vec![("work_mem".into(), "8MB".into())],
            ..Default::default()
        })
        .unwrap();
        assert_eq!(c.psql("postgres", "show work_mem").unwrap().trim(), "8MB");
        std::net::TcpStream::connect(("127.0.0.1", c.port())).unwrap();
        let dir = c.socket_dir().to_path_buf();
        // A restart keeps the cluster and its data (issue #37's outages need one).
        c.psql("postgres", "create table kept(x int)").unwrap();
        c.restart().unwrap();
        assert_eq!(
            c.psql("postgres", "select count(*) from kept")
                .unwrap()
                .trim(),
            "0"
        );
        c.stop();
        assert!(!dir.exists(), "cluster directory removed");
    }
}
