//! The first connection of either mode, as pgbench's `doConnect` makes it: when the
//! server wants a password and none is known, ask on the terminal and try again.

use pgbench_wire::{ConnectArgs, ConnectOptions, Connection};

/// Connects as pgbench's `doConnect` does: when the server wants a password and none
/// is known, asks for one on the terminal and tries again; later connections reuse it.
pub fn connect_with_prompt(
    args: &mut ConnectArgs,
) -> Result<(Connection, ConnectOptions), pgbench_wire::ConnError> {
    loop {
        let opts = ConnectOptions::from_args(args)?;
        match Connection::connect(&opts) {
            Ok(conn) => return Ok((conn, opts)),
            Err(e) if e.needs_password() && args.password.is_none() => {
                args.password = Some(crate::sys::prompt_password("Password: "));
            }
            Err(e) => return Err(e),
        }
    }
}
