//! The round-trip hot path allocates nothing once warmed up: simple, extended and
//! prepared queries with parameters, and a pipeline, counted with a global allocator
//! that tallies the allocations of the measuring thread only.
#![allow(unsafe_code)]

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pgbench_wire::{Connection, ResultStatus};

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note() {
    if COUNTING.with(Cell::get) {
        ALLOCATIONS.with(|a| a.set(a.get() + 1));
    }
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is
// only a side effect (thread-local cells without destructors, safe in an allocator).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const SQL: &str = "select $1::int + 1, $2::text, 'fixed text column'";

fn round_trips(conn: &mut Connection, n: usize) {
    let params: [Option<&[u8]>; 2] = [Some(b"41"), None];
    for _ in 0..n {
        conn.send_query("select 1 as one, 'abc' as two").unwrap();
        while let Some(r) = conn.get_result().unwrap() {
            assert_eq!(r, ResultStatus::TuplesOk);
            assert_eq!(conn.last_row_value(0), Some(b"1".as_slice()));
            assert_eq!(conn.field_name(1), "two");
        }
        conn.send_query_params(SQL, &params).unwrap();
        while let Some(r) = conn.get_result().unwrap() {
            assert_eq!(r, ResultStatus::TuplesOk);
        }
        conn.send_query_prepared("P_0", &params).unwrap();
        while let Some(r) = conn.get_result().unwrap() {
            assert_eq!(r, ResultStatus::TuplesOk);
            assert_eq!(conn.last_row_value(0), Some(b"42".as_slice()));
        }
        conn.enter_pipeline_mode().unwrap();
        conn.send_query_prepared("P_0", &params).unwrap();
        conn.send_query_params(SQL, &params).unwrap();
        conn.pipeline_sync().unwrap();
        let mut syncs = 0;
        while syncs == 0 {
            if let Some(ResultStatus::PipelineSync) = conn.get_result().unwrap() {
                syncs += 1;
            }
        }
        assert_eq!(conn.get_result().unwrap(), None);
        conn.exit_pipeline_mode().unwrap();
    }
}

#[test]
fn round_trips_do_not_allocate() {
    let mut conn = common::shared_conn("wire_no_alloc");
    conn.send_prepare("P_0", SQL, 2).unwrap();
    while conn.get_result().unwrap().is_some() {}
    round_trips(&mut conn, 20);
    COUNTING.with(|c| c.set(true));
    round_trips(&mut conn, 200);
    COUNTING.with(|c| c.set(false));
    assert_eq!(ALLOCATIONS.with(Cell::get), 0);
}
