//! `pgbench-rs`: a drop-in replacement for PostgreSQL's pgbench. Everything lives in
//! the library: `cli::run` runs the command line, and an error that ends it is
//! reported here, once ([`pgbench_rs::diagnostic`]).

fn main() {
    pgbench_rs::sys::limit_malloc_arenas();
    let argv: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let status =
        pgbench_rs::cli::run(&argv).unwrap_or_else(|e| pgbench_rs::diagnostic::report(&*e));
    std::process::exit(status.code());
}
