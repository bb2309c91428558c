//! The password prompt of PostgreSQL's client programs (`simple_prompt` in
//! src/common/sprompt.c), which pgbench shows when the server wants a password and
//! none is known: on the terminal with echo off, or, when `/dev/tty` cannot be
//! opened (no controlling terminal, as under `setsid` or cron), on stderr reading
//! stdin, so `echo pw | setsid pgbench ...` works as with stock pgbench.

use std::fs::OpenOptions;
use std::io::{self, BufRead, BufReader, Write};
use std::os::fd::AsRawFd;

/// Shows `prompt` and reads one line without echo; the line without its end of
/// line, or empty when nothing could be read (as `simple_prompt` returns).
pub fn prompt_password(prompt: &str) -> String {
    let tty = (
        OpenOptions::new().read(true).open("/dev/tty"),
        OpenOptions::new().write(true).open("/dev/tty"),
    );
    match tty {
        (Ok(input), Ok(output)) => ask(prompt, &input, BufReader::new(&input), output),
        _ => ask(prompt, &io::stdin(), io::stdin().lock(), io::stderr()),
    }
}

fn ask(
    prompt: &str,
    input: &impl AsRawFd,
    mut reader: impl BufRead,
    mut output: impl Write,
) -> String {
    let saved = crate::sys::echo_off(input.as_raw_fd());
    let _ = output.write_all(prompt.as_bytes());
    let _ = output.flush();
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() {
        line.clear();
    }
    if let Some(saved) = saved {
        crate::sys::restore_terminal(input.as_raw_fd(), &saved);
    }
    // The newline the user typed was not echoed.
    let _ = output.write_all(b"\n");
    let _ = output.flush();
    let end = line.trim_end_matches(['\n', '\r']).len();
    line.truncate(end);
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs::File;

    #[test]
    fn reads_one_line_and_ends_the_prompt_line() {
        let input = File::open("/dev/null").unwrap();
        let mut out = Vec::new();
        let pw = ask("Password: ", &input, &b"s3cret\r\nnext\n"[..], &mut out);
        assert_eq!(pw, "s3cret");
        assert_eq!(out, b"Password: \n");
        let pw = ask("Password: ", &input, &b""[..], &mut Vec::new());
        assert_eq!(pw, "");
    }
}
