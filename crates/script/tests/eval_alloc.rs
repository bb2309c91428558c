//! The evaluator's hot path allocates nothing: `\set` of int/double expressions with
//! variables, random draws and storage into the variable table, counted with a
//! global allocator that tallies the allocations of the measuring thread (other test
//! threads and the harness allocate concurrently).
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use pgbench_script::ast::{Expr, Func, Value};
use pgbench_script::eval::{evaluate, EvalContext};
use pgbench_script::prng::Prng;
use pgbench_script::variables::Variables;

struct Counting;

thread_local! {
    // Const-initialised, no destructor: reading it never allocates.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    ALLOCATIONS.with(|a| a.set(a.get() + 1));
}

// SAFETY: every call is forwarded unchanged to the system allocator; the counter is
// only a side effect.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: same contract as our caller's.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `System.alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: same contract as our caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn call(func: Func, args: Vec<Expr>) -> Expr {
    Expr::Func { func, args }
}

fn int(i: i64) -> Expr {
    Expr::Const(Value::Int(i))
}

#[test]
fn set_and_substitute_without_allocating() {
    let var = |n: &str| Expr::Var(n.to_string());
    // random(1, 100000 * :scale), hash(:aid, :default_seed), a CASE, doubles, a
    // comparison, and a variable that starts as a string (-D).
    let exprs = [
        (
            "aid",
            call(
                Func::Random,
                vec![int(1), call(Func::Mul, vec![int(100000), var("scale")])],
            ),
        ),
        (
            "h",
            call(Func::HashMurmur2, vec![var("aid"), var("default_seed")]),
        ),
        (
            "c",
            call(
                Func::Case,
                vec![
                    call(Func::Lt, vec![var("aid"), int(50000)]),
                    int(1),
                    call(
                        Func::Eq,
                        vec![call(Func::Mod, vec![var("aid"), int(2)]), int(0)],
                    ),
                    int(2),
                    int(3),
                ],
            ),
        ),
        (
            "d",
            call(
                Func::Div,
                vec![call(Func::Double, vec![var("aid")]), var("ratio")],
            ),
        ),
        (
            "g",
            call(
                Func::RandomGaussian,
                vec![int(1), int(1000), Expr::Const(Value::Double(2.5))],
            ),
        ),
        (
            "p",
            call(
                Func::Permute,
                vec![var("aid"), int(1000), var("default_seed")],
            ),
        ),
    ];
    let mut vars = Variables::new();
    vars.set_int("startup", "scale", 10).unwrap();
    vars.set_int("startup", "default_seed", 12345).unwrap();
    vars.set_text("option", "ratio", "2.5").unwrap();
    let mut rng = Prng::seed(1);
    let mut sink = std::io::sink();
    let mut sql = String::with_capacity(256);
    let mut run = |vars: &mut Variables, rng: &mut Prng, sql: &mut String| {
        for (name, e) in &exprs {
            let mut ctx = EvalContext {
                vars: &mut *vars,
                rng: &mut *rng,
                script_index: 0,
                command_index: 1,
                debug_out: &mut sink,
            };
            let v = evaluate(e, &mut ctx).unwrap();
            vars.set_value("set", name, v).unwrap();
        }
        sql.clear();
        for name in ["aid", "h", "c", "d", "g", "p", "ratio"] {
            assert!(vars.write_text(name, sql));
            sql.push(',');
        }
    };
    // The first round creates the variables.
    run(&mut vars, &mut rng, &mut sql);
    let before = ALLOCATIONS.with(Cell::get);
    for _ in 0..1000 {
        run(&mut vars, &mut rng, &mut sql);
    }
    assert_eq!(
        ALLOCATIONS.with(Cell::get) - before,
        0,
        "allocations on the hot path"
    );
    assert!(sql.contains(",2.5,"));
}
