//! `pgbench-rs`: a drop-in replacement for PostgreSQL's pgbench. Everything lives in
//! the library; see `cli::main`.

fn main() {
    std::process::exit(pgbench_rs::cli::main());
}
