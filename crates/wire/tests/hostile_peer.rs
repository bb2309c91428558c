//! A peer that is not PostgreSQL, or one that sends garbage: refused at once with
//! libpq's words, `connect_timeout` kept as one deadline, and the message reader fed
//! arbitrary bytes never panics, never hangs and never allocates from a length the
//! peer made up (counted with a global allocator that tracks the measuring thread).
#![allow(unsafe_code)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::io::Write;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{our_error, peer, stock_error, Env};
use pgbench_wire::ConnectArgs;
use proptest::prelude::*;

struct Tracking;

thread_local! {
    static TRACKING: Cell<bool> = const { Cell::new(false) };
    static LIVE: Cell<isize> = const { Cell::new(0) };
    static PEAK: Cell<isize> = const { Cell::new(0) };
}

fn track(delta: isize) {
    if TRACKING.with(Cell::get) {
        let live = LIVE.with(|l| {
            l.set(l.get() + delta);
            l.get()
        });
        PEAK.with(|p| p.set(p.get().max(live)));
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; the tally is a
// side effect in thread-local cells without destructors (safe inside an allocator).
unsafe impl GlobalAlloc for Tracking {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        track(layout.size() as isize);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        track(layout.size() as isize);
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        track(-(layout.size() as isize));
        // SAFETY: `ptr` came from `System` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        track(new_size as isize - layout.size() as isize);
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Tracking = Tracking;

fn args(port: u16, extra: &str) -> ConnectArgs {
    ConnectArgs {
        dbname: Some(format!(
            "host=127.0.0.1 port={port} user=u dbname=d {extra}"
        )),
        ..ConnectArgs::default()
    }
}

const HTTP_REPLY: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n";

/// An HTTP server on the port: libpq stops at the first byte, and so do we, without
/// waiting for the peer to close (it keeps the connection open here).
#[test]
fn an_http_server_is_refused_at_once() {
    let port = peer(|s| {
        let _ = s.write_all(HTTP_REPLY);
        std::thread::sleep(Duration::from_secs(20));
    });
    let env = Env::new();
    for extra in [
        "sslmode=disable",
        "sslmode=prefer",
        "sslmode=disable connect_timeout=2",
    ] {
        let a = args(port, extra);
        let started = Instant::now();
        let ours = our_error(&env, &a).to_string();
        let took = started.elapsed();
        assert!(took < Duration::from_millis(500), "{extra}: {took:?}");
        assert_eq!(ours, stock_error(&env, &a), "{extra}");
    }
    assert!(our_error(&env, &args(port, "sslmode=disable"))
        .to_string()
        .ends_with("expected authentication request from server, but received H"));
}

/// What libpq makes of other start-up replies that are not PostgreSQL 3.0's: an
/// authentication request of an impossible length, a pre-3.0 server's plain-text
/// error, a message type not allowed before authentication; ours word for word.
#[test]
fn malformed_start_up_replies_read_like_libpq() {
    let env = Env::new();
    for reply in [
        &b"R\0\0\x10\0\0\0\0\0"[..],
        b"E\0\0\xff\xffold server says no\0",
        b"E\0\0\0\x02no\n\0",
        b"N\0\0\0\x08abcd",
        b"v\0\0\0\x08\0\0\0\0",
        b"R\0\0\0\x08\0\0\0\0C\0\0\0\x0bSELECT\0",
        b"R\0\0\0\x08\0\0\0\0S\0\x01\0\0",
    ] {
        let reply = reply.to_vec();
        let port = peer(move |s| {
            let _ = s.write_all(&reply);
            std::thread::sleep(Duration::from_millis(300));
        });
        let a = args(port, "sslmode=disable");
        assert_eq!(our_error(&env, &a).to_string(), stock_error(&env, &a));
    }
}

/// A peer that trickles a well-formed but endless start-up, one byte at a time: the
/// whole attempt ends at `connect_timeout`, not a fresh timeout per read.
#[test]
fn connect_timeout_is_one_deadline_for_the_attempt() {
    let port = peer(|s| {
        // AuthenticationCleartextPassword's header, its body never finished.
        let _ = s.write_all(b"R\0\0\0\x08");
        for _ in 0..40 {
            std::thread::sleep(Duration::from_millis(300));
            if s.write_all(b"\0").is_err() {
                return;
            }
        }
    });
    let env = Env::new();
    let a = args(port, "sslmode=disable connect_timeout=2");
    let started = Instant::now();
    let ours = our_error(&env, &a).to_string();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_millis(2150),
        "{took:?}"
    );
    assert!(ours.ends_with("failed: timeout expired"), "{ours}");
    assert_eq!(ours, stock_error(&env, &a));
}

/// A server that completes start-up but never answers target_session_attrs's
/// query: the check is still under `connect_timeout`, as in libpq.
#[test]
fn connect_timeout_covers_the_target_session_check() {
    let port = peer(|s| {
        let _ = s.write_all(b"R\0\0\0\x08\0\0\0\0Z\0\0\0\x05I");
        std::thread::sleep(Duration::from_secs(10));
    });
    let env = Env::new();
    let a = args(
        port,
        "sslmode=disable connect_timeout=2 target_session_attrs=read-write",
    );
    let started = Instant::now();
    let ours = our_error(&env, &a).to_string();
    let took = started.elapsed();
    assert!(took < Duration::from_millis(2150), "{took:?}");
    assert!(ours.ends_with("failed: timeout expired"), "{ours}");
    assert_eq!(ours, stock_error(&env, &a));
}

/// What `bytes` from the peer make the client do: the connection attempt (and, if
/// the bytes complete a start-up, a query's results) on a thread of its own, which
/// must finish within a few seconds; the peak of its live heap bytes.
fn client_against(bytes: Vec<u8>) -> isize {
    let port = peer(move |s| {
        let _ = s.write_all(&bytes);
    });
    let (done, wait) = mpsc::channel();
    std::thread::spawn(move || {
        let env = Env::new();
        let opts = env
            .options(&args(port, "sslmode=disable connect_timeout=3"))
            .unwrap();
        TRACKING.with(|t| t.set(true));
        if let Ok(mut conn) = pgbench_wire::Connection::connect(&opts) {
            if conn.send_query("select 1").is_ok() {
                while let Ok(Some(_)) = conn.get_result() {}
            }
        }
        TRACKING.with(|t| t.set(false));
        let _ = done.send(PEAK.with(Cell::get));
    });
    wait.recv_timeout(Duration::from_secs(5))
        .expect("the client finished")
}

/// Bytes a server might send: anything, or message headers with lengths from tiny to
/// absurd, each after a valid start-up or not.
fn peer_bytes() -> impl Strategy<Value = Vec<u8>> {
    let header = (
        any::<u8>(),
        any::<u32>(),
        proptest::collection::vec(any::<u8>(), 0..64),
    )
        .prop_map(|(tag, len, body)| {
            let mut m = vec![tag];
            m.extend_from_slice(&len.to_be_bytes());
            m.extend(body);
            m
        });
    let message = prop_oneof![proptest::collection::vec(any::<u8>(), 0..512), header];
    (any::<bool>(), proptest::collection::vec(message, 0..6)).prop_map(
        |(after_startup, messages)| {
            let mut out = Vec::new();
            if after_startup {
                out.extend_from_slice(b"R\0\0\0\x08\0\0\0\0Z\0\0\0\x05I");
            }
            messages.into_iter().for_each(|m| out.extend(m));
            out
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn arbitrary_bytes_from_the_peer(bytes in peer_bytes()) {
        let peak = client_against(bytes);
        // Buffers of a connection and an error message: far below any length a peer
        // can claim.
        prop_assert!(peak < 256 * 1024, "peak heap {peak} bytes");
    }
}

/// The lengths that used to be trusted: `TTP/` read as a length, and the largest
/// ones, before and after authentication.
#[test]
fn huge_lengths_allocate_nothing() {
    for bytes in [
        HTTP_REPLY.to_vec(),
        b"R\x7f\xff\xff\xff".to_vec(),
        b"E\xff\xff\xff\xff".to_vec(),
        b"R\0\0\0\x08\0\0\0\0Z\0\0\0\x05IS\x48\x54\x54\x50".to_vec(),
        b"R\0\0\0\x08\0\0\0\0Z\0\0\0\x05ID\x7f\xff\xff\xffabc".to_vec(),
        b"R\0\0\0\x08\0\0\0\0S\x7f\xff\xff\xff".to_vec(),
    ] {
        let peak = client_against(bytes.clone());
        assert!(peak < 256 * 1024, "{bytes:?}: peak heap {peak} bytes");
    }
}
