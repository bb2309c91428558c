//! #38: peers that misbehave against `--metrics-listen` on real runs. An endless
//! request line or header block (under an address-space limit, as reported), a peer
//! that pipelines requests and never reads, hundreds of idle connections, a run under
//! a small open-files limit: each time the endpoint keeps answering other scrapes, the
//! process keeps a few threads and files, and the run ends on time (the linger too,
//! and on Ctrl-C) with its report and its `--export-json` file.

use super::{finish, free_port, processed, sample, scrape, script};
use crate::support::{aim, fresh_db};
use serde_json::Value;
use std::io::{ErrorKind, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a run may take past its `-T` and linger before the test calls it hung:
/// generous for a busy machine; the hangs of #38 lasted until the peer went away.
const HANG: Duration = Duration::from_secs(90);

/// A run of pgbench-rs with the endpoint on `port`, killed if the test fails first.
struct Attacked {
    child: Option<Child>,
    port: u16,
    dir: tempfile::TempDir,
}

impl Attacked {
    /// `-n -c 2` of [`script`] with `--export-json=r.json` and `args`, under `prlimit
    /// limit` when given; returns once the endpoint answers.
    fn start(test: &str, limit: Option<&str>, args: &[&str]) -> Attacked {
        let db = fresh_db(test);
        let dir = tempfile::tempdir().unwrap();
        let script = script(&dir);
        let port = free_port();
        let ours = env!("CARGO_BIN_EXE_pgbench-rs");
        let mut cmd = match limit {
            // prlimit sets the limit and executes the program in its place.
            Some(limit) => {
                let mut c = Command::new("prlimit");
                c.args([limit, "--", ours]);
                c
            }
            None => Command::new(ours),
        };
        aim(&mut cmd, db.cluster, &db.name);
        let listen = format!("--metrics-listen=127.0.0.1:{port}");
        let common = [
            "-n",
            "-c",
            "2",
            "-f",
            &script,
            &listen,
            "--export-json=r.json",
        ];
        let child = cmd
            .current_dir(dir.path())
            .args(common)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start pgbench-rs");
        let mut run = Attacked {
            child: Some(child),
            port,
            dir,
        };
        let deadline = Instant::now() + Duration::from_secs(60);
        while scrape(port).is_none() {
            let child = run.child.as_mut().unwrap();
            if let Some(status) = child.try_wait().unwrap() {
                let (_, _, stderr) = finish(run.child.take().unwrap());
                panic!("pgbench-rs ended before serving ({status}): {stderr}");
            }
            assert!(Instant::now() < deadline, "the endpoint never answered");
            std::thread::sleep(Duration::from_millis(50));
        }
        run
    }

    fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// The process's threads and open files now.
    fn threads_and_files(&self) -> (usize, usize) {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let threads = status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .and_then(|n| n.trim().parse().ok())
            .unwrap();
        let files = std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .unwrap()
            .count();
        (threads, files)
    }

    fn interrupt(&self) {
        let pid = self.pid().to_string();
        assert!(Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success());
    }

    /// Waits for the run to end, at most `-T` and linger plus [`HANG`]; checks that it
    /// completed with its report and results file, and returns its report.
    fn completed(mut self) -> String {
        let child = self.child.take().unwrap();
        let pid = child.id().to_string();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || tx.send(finish(child)));
        let Ok((code, stdout, stderr)) = rx.recv_timeout(HANG) else {
            let _ = Command::new("kill").args(["-KILL", &pid]).status();
            panic!("the run did not end within {HANG:?} of its time");
        };
        assert_eq!(code, 0, "{stderr}");
        let count = processed(&stdout);
        assert!(count > 0, "{stdout}");
        let json = std::fs::read_to_string(self.dir.path().join("r.json")).expect("r.json");
        let doc: Value = serde_json::from_str(&json).unwrap();
        assert_eq!(doc["run"]["total"]["cnt"].as_i64(), Some(count));
        stdout
    }
}

impl Drop for Attacked {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Sends `start`, then `filler` again and again until the endpoint closes the
/// connection or `most` bytes went; the bytes sent.
fn flood(port: u16, start: &[u8], filler: &[u8], most: usize) -> usize {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(start).unwrap();
    let mut sent = start.len();
    while sent < most {
        match s.write(filler) {
            Ok(n) => sent += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => {
                let k = e.kind();
                let timed_out = matches!(k, ErrorKind::WouldBlock | ErrorKind::TimedOut);
                assert!(!timed_out, "the endpoint stopped reading without closing");
                return sent;
            }
        }
    }
    sent
}

/// The scrape the tests make beside the attack: it answers, with the run's figures.
fn scrape_works(port: u16) {
    let text = scrape(port).expect("a scrape beside the attack is answered");
    assert!(
        sample(&text, "pgbench_clients_connected").is_some(),
        "{text}"
    );
}

#[test]
/// Issue #38.
fn an_endless_request_line_or_header_block_is_cut_off() {
    let limit = Some("--as=1500000000");
    let run = Attacked::start("metrics_endless", limit, &["-T", "8", "--metrics-linger=1"]);
    let most = 256 << 20;
    let chunk = vec![b'a'; 64 << 10];
    let sent = flood(run.port, b"GET /", &chunk, most);
    // The head's 8 KiB, what is drained after the answer, and the sockets' buffers.
    assert!(sent < 64 << 20, "{sent} bytes of a request line taken");
    scrape_works(run.port);
    let headers =
        b"X-Filler: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\r\n".repeat(1024);
    let sent = flood(run.port, b"GET /metrics HTTP/1.1\r\n", &headers, most);
    assert!(sent < 64 << 20, "{sent} bytes of headers taken");
    scrape_works(run.port);
    run.completed();
}

#[test]
/// Issue #38.
fn a_peer_that_pipelines_and_never_reads_holds_up_nothing() {
    let run = Attacked::start(
        "metrics_pipelining",
        None,
        &["-T", "8", "--metrics-linger=2"],
    );
    let mut peer = TcpStream::connect(("127.0.0.1", run.port)).unwrap();
    peer.set_write_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let request = b"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".repeat(100);
    // Until the endpoint closes it or stops reading (its answers unread fill the
    // sockets): either way the peer stays connected, reading nothing.
    for _ in 0..1000 {
        if peer.write_all(&request).is_err() {
            break;
        }
    }
    scrape_works(run.port);
    scrape_works(run.port);
    // The run ends after -T and the linger though the peer is still there.
    run.completed();
    drop(peer);
}

#[test]
/// Issue #38.
fn hundreds_of_idle_connections_cost_neither_threads_nor_scrapes() {
    let run = Attacked::start("metrics_idle", None, &["-T", "4", "--metrics-linger=600"]);
    let idle: Vec<TcpStream> = (0..500)
        .map(|_| TcpStream::connect(("127.0.0.1", run.port)).unwrap())
        .collect();
    scrape_works(run.port);
    // Accepted in order: the scrape's answer came after the 500 were taken.
    let (threads, files) = run.threads_and_files();
    assert!(threads < 32, "{threads} threads");
    assert!(files < 64, "{files} open files");
    scrape_works(run.port);
    // Lingering, with the connections still open: Ctrl-C ends it at once.
    let deadline = Instant::now() + HANG;
    loop {
        let text = scrape(run.port).expect("serving");
        if sample(&text, "pgbench_phase{phase=\"finished\"}") == Some(1.0) {
            break;
        }
        assert!(Instant::now() < deadline, "the run did not finish");
        std::thread::sleep(Duration::from_millis(100));
    }
    run.interrupt();
    run.completed();
    drop(idle);
}

#[test]
/// Issue #38.
fn a_small_open_files_limit_leaves_the_endpoint_and_the_run_alive() {
    // The run's own files (its sockets, the ring, the listener) and a few more.
    let limit = Some("--nofile=40");
    let run = Attacked::start("metrics_nofile", limit, &["-T", "6", "--metrics-linger=1"]);
    // Far more connections than files: the old endpoint's accepts failed here, and it
    // was gone for the rest of the run.
    let idle: Vec<TcpStream> = (0..200)
        .map(|_| TcpStream::connect(("127.0.0.1", run.port)).unwrap())
        .collect();
    // The endpoint took one or two of them and left the rest to the run.
    let (_, files) = run.threads_and_files();
    assert!(files <= 20, "{files} open files");
    for _ in 0..3 {
        scrape_works(run.port);
    }
    run.completed();
    drop(idle);
}
