//! Running meta-commands (pgbench.c `executeMetaCommand` and `runShellCommand`):
//! `\set`, `\sleep`, `\shell`, `\setshell` and the pipeline commands, with pgbench's
//! messages for each way they fail. `\if` and friends are the run loop's (they move
//! the [`super::conditional`] stack, nothing else).

use super::failure::TxError;
use super::link::connected;
use super::{Client, Flow, Phase, Wait};
use crate::bench::error::ClientAbort;
use pgbench_results::QueryMode;
use pgbench_script::ast::{CommandKind, MetaCommand, ShellArg, SleepArg};

/// pgbench's `SHELL_COMMAND_SIZE`.
const SHELL_COMMAND_SIZE: usize = 256;

impl Client<'_> {
    pub(super) fn run_meta(
        &mut self,
        meta: &MetaCommand,
        script: usize,
        index: usize,
    ) -> Result<Flow, TxError> {
        match meta {
            MetaCommand::Set { var, .. } => {
                let v = self.eval(script, index, "set")?;
                if let Err(e) = self.vars.set_value("set", var, v) {
                    let abort = self.command_failed(
                        script,
                        index,
                        "set",
                        "assignment of meta-command failed",
                    );
                    return Err(abort.because(e.to_string()).into());
                }
            }
            MetaCommand::Sleep { duration, unit_us } => {
                let amount = match duration {
                    SleepArg::Const(n) => *n,
                    SleepArg::Var(name) => self.sleep_amount(name).map_err(|why| {
                        self.command_failed(
                            script,
                            index,
                            "sleep",
                            "execution of meta-command failed",
                        )
                        .because(why)
                    })?,
                };
                let usec = amount.saturating_mul(*unit_us);
                if usec > 0 {
                    let now = self.now();
                    let mut until = now.saturating_add(usec);
                    if self.ctx.scripts[script].untimed_sleeps {
                        // A pause between transactions ends with the run.
                        if let Some(end) = self.ctx.control.clock.end_us() {
                            until = until.min(end);
                        }
                        self.tx.paused_from = Some(now);
                    }
                    self.record.flush_before_wait(now, until);
                    return Ok(Flow::Wait(Phase::Sleeping, Wait::Until(until)));
                }
            }
            MetaCommand::SetShell { var, command, args } => {
                self.run_shell(Some(var), command, args)
                    .map_err(|why| self.shell_failed(script, index, "setshell", why))?;
            }
            MetaCommand::Shell { command, args } => {
                self.run_shell(None, command, args)
                    .map_err(|why| self.shell_failed(script, index, "shell", why))?;
            }
            MetaCommand::SetRandStr { var, template } => {
                let rng = &mut self.rng;
                let set = self.vars.set_text_with("setrandstr", var, |out| {
                    pgbench_script::rand_str(rng, template, out)
                });
                if let Err(e) = set {
                    let abort = self.command_failed(
                        script,
                        index,
                        "setrandstr",
                        "assignment of meta-command failed",
                    );
                    return Err(abort.because(e.to_string()).into());
                }
            }
            MetaCommand::If(_) | MetaCommand::Elif(_) | MetaCommand::Else | MetaCommand::Endif => {
                unreachable!("conditionals are handled by run_commands")
            }
            MetaCommand::StartPipeline => return self.start_pipeline(script, index),
            MetaCommand::SyncPipeline | MetaCommand::EndPipeline => {
                return self.sync_pipeline(meta, script, index)
            }
        }
        Ok(Flow::Next)
    }

    /// `\startpipeline` (under `-M prepared`, everything up to `\endpipeline` is
    /// prepared first, as pgbench's `prepareCommandsInPipeline` does).
    fn start_pipeline(&mut self, script: usize, index: usize) -> Result<Flow, TxError> {
        let mode = self.ctx.plan.settings.query_mode;
        let refuse = |s: &Self, message| s.command_failed(script, index, "startpipeline", message);
        if mode == QueryMode::Simple {
            return Err(refuse(
                self,
                "cannot use pipeline mode with the simple query protocol",
            )
            .into());
        }
        if self.in_pipeline() {
            return Err(refuse(self, "already in pipeline mode").into());
        }
        if mode == QueryMode::Prepared {
            let commands = &self.ctx.scripts[script].script.commands;
            let end = commands[index..]
                .iter()
                .position(|c| matches!(c.kind, CommandKind::Meta(MetaCommand::EndPipeline)))
                .map_or(commands.len(), |p| index + p);
            if let Some(command) = self.prepare_commands(script, index + 1, end)? {
                return Ok(super::sql::awaiting_prepare(command));
            }
        }
        if connected(&mut self.conn).enter_pipeline_mode().is_err() {
            return Err(refuse(self, "failed to enter pipeline mode").into());
        }
        self.pending_syncs = 0;
        Ok(Flow::Next)
    }

    /// `\syncpipeline` queues a sync; `\endpipeline` sends one and reads every result.
    fn sync_pipeline(
        &mut self,
        meta: &MetaCommand,
        script: usize,
        index: usize,
    ) -> Result<Flow, TxError> {
        let word = meta.name();
        if !self.in_pipeline() {
            return Err(self
                .command_failed(script, index, word, "not in pipeline mode")
                .into());
        }
        let only_queue = matches!(meta, MetaCommand::SyncPipeline);
        let conn = connected(&mut self.conn);
        let sent = if only_queue {
            conn.send_pipeline_sync()
        } else {
            conn.pipeline_sync()
        };
        if sent.is_err() {
            let abort = self.command_failed(script, index, word, "failed to send a pipeline sync");
            return Err(self.lost_or(index, abort));
        }
        if only_queue {
            self.pending_syncs += 1;
            return Ok(Flow::Next);
        }
        let syncs = self.pending_syncs + 1;
        self.pending_syncs = 0;
        let wait = Wait::Replies { syncs };
        Ok(Flow::Wait(Phase::AwaitPipeline { syncs }, wait))
    }

    /// The end of a `\sleep`. A pause (a script with untimed sleeps) is not the
    /// transaction's time: its latency (and `-R` lag) count from after it; and a
    /// pause the run ended in ends the client there (true).
    pub(super) fn pause_outlived_run(&mut self) -> bool {
        let Some(from) = self.tx.paused_from.take() else {
            return false;
        };
        if self.ctx.control.clock.timer_exceeded() {
            return true;
        }
        let paused = self.now() - from;
        self.tx.scheduled += paused;
        self.tx.begin += paused;
        false
    }

    /// The value of `\sleep :name`, or why it is not a sleep time.
    fn sleep_amount(&self, name: &str) -> Result<i64, String> {
        let Some(var) = self.vars.get(name) else {
            return Err(format!("sleep: undefined variable \"{name}\""));
        };
        let mut text = String::new();
        var.write_text(&mut text);
        let n = i64::from(pgbench_script::cnum::atoi(&text));
        if n == 0 && !text.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "sleep: invalid sleep time \"{text}\" for variable \"{name}\""
            ));
        }
        Ok(n)
    }

    /// `\shell` or `\setshell` failed: pgbench's abort, after the shell's complaint
    /// (there is none when the run's time is up).
    fn shell_failed(
        &self,
        script: usize,
        index: usize,
        kind: &'static str,
        why: Option<String>,
    ) -> ClientAbort {
        let abort = self.command_failed(script, index, kind, "execution of meta-command failed");
        match why {
            Some(w) => abort.because(w),
            None => abort,
        }
    }

    /// The command line `\shell`/`\setshell` runs: the words with `:name` replaced
    /// by the variables' values (`::x` is a literal `:x`), at most pgbench's 255 bytes.
    fn shell_line(&self, command: &str, args: &[ShellArg]) -> Result<String, Option<String>> {
        let word = command;
        let value = |name: &str| match self.vars.get(name) {
            Some(v) => {
                let mut s = String::new();
                v.write_text(&mut s);
                Ok(s)
            }
            // pgbench quotes the argument as written, colon included.
            None => Err(Some(format!("{word}: undefined variable \":{name}\""))),
        };
        let mut parts: Vec<String> = Vec::with_capacity(args.len() + 1);
        // The command word follows the argument rules too.
        parts.push(if let Some(rest) = command.strip_prefix("::") {
            format!(":{rest}")
        } else if let Some(name) = command.strip_prefix(':') {
            value(name)?
        } else {
            command.to_string()
        });
        for arg in args {
            parts.push(match arg {
                ShellArg::Literal(s) => s.clone(),
                ShellArg::Var(name) => value(name)?,
            });
        }
        let mut line = String::new();
        for (i, p) in parts.iter().enumerate() {
            if line.len() + p.len() + usize::from(i > 0) >= SHELL_COMMAND_SIZE - 1 {
                return Err(Some(format!("{word}: shell command is too long")));
            }
            if i > 0 {
                line.push(' ');
            }
            line.push_str(p);
        }
        Ok(line)
    }

    /// `runShellCommand`: `\shell` (no variable) or `\setshell` (store the integer).
    /// `Err` carries the line pgbench prints before the abort, if any.
    fn run_shell(
        &mut self,
        var: Option<&str>,
        command: &str,
        args: &[ShellArg],
    ) -> Result<(), Option<String>> {
        let word = command;
        let line = self.shell_line(command, args)?;
        let _ = std::io::Write::flush(&mut std::io::stdout());
        let Some(var) = var else {
            let status = shell_command(&line).status();
            return match status {
                Ok(s) if s.success() => Ok(()),
                _ => Err((!self.ctx.control.clock.timer_exceeded())
                    .then(|| format!("{word}: could not launch shell command"))),
            };
        };
        let Some(first) = first_line_of(shell_command(&line)) else {
            return Err(Some(format!("{word}: could not launch shell command")));
        };
        let mut res = String::from_utf8_lossy(&first).into_owned();
        if res.len() > SHELL_RESULT_MAX {
            let mut cut = SHELL_RESULT_MAX;
            while !res.is_char_boundary(cut) {
                cut -= 1;
            }
            res.truncate(cut);
        }
        if res.is_empty() {
            return Err((!self.ctx.control.clock.timer_exceeded())
                .then(|| format!("{word}: could not read result of shell command")));
        }
        let trimmed_start = res.trim_start_matches(|c: char| c.is_ascii_whitespace());
        let (num, rest) = pgbench_script::cnum::strtol_prefix(trimmed_start);
        // Without digits strtol leaves its end at the start: a blank line passes as 0.
        let rest = if num.is_some() { rest } else { res.as_str() };
        let valid = rest
            .trim_matches(|c: char| c.is_ascii_whitespace())
            .is_empty();
        if !valid {
            return Err(Some(format!(
                "{word}: shell command must return an integer (not \"{res}\")"
            )));
        }
        // pgbench keeps the value as a C int.
        let value = num.unwrap_or(0) as i32;
        if let Err(e) = self.vars.set_int("setshell", var, i64::from(value)) {
            return Err(Some(e.to_string()));
        }
        if self.ctx.plan.debug {
            // pgbench names its argv[1] here: the command's first argument as written
            // (printf's "(null)" without one), not the variable.
            let name = match args.first() {
                Some(ShellArg::Var(n)) => format!(":{n}"),
                Some(ShellArg::Literal(l)) if l.starts_with(':') => format!(":{l}"),
                Some(ShellArg::Literal(l)) => l.clone(),
                None => "(null)".to_string(),
            };
            self.ctx.out.info(&format!(
                "{word}: shell parameter name: \"{name}\", value: \"{res}\""
            ));
        }
        Ok(())
    }
}

/// The words pgbench keeps of a meta-command (its `argv`), as its debug line shows
/// them: `\set` keeps only the variable name and `\if`/`\elif` only their word (the
/// expression is parsed apart), and `\sleep 10ms` keeps `10ms` plus the unit it split
/// off. Continuation lines join the words.
pub(super) fn meta_argv(meta: &MetaCommand, first_line: &str) -> String {
    let text = first_line
        .strip_prefix('\\')
        .unwrap_or(first_line)
        .replace("\\\r\n", " ")
        .replace("\\\n", " ");
    let mut words: Vec<&str> = text
        .split([' ', '\t', '\r', '\n', '\x0b', '\x0c'])
        .filter(|w| !w.is_empty())
        .collect();
    match meta {
        MetaCommand::Set { .. } => words.truncate(2),
        MetaCommand::If(_) | MetaCommand::Elif(_) => words.truncate(1),
        _ => {}
    }
    let mut line = words.join(" ");
    if let (MetaCommand::Sleep { .. }, [_, arg]) = (meta, words.as_slice()) {
        if !arg.starts_with(':') {
            let unsigned = arg.strip_prefix(['+', '-']).unwrap_or(arg);
            let unit = unsigned.trim_start_matches(|c: char| c.is_ascii_digit());
            if !unit.is_empty() && unit.len() < unsigned.len() {
                line.push(' ');
                line.push_str(unit);
            }
        }
    }
    line
}

/// What pgbench's `fgets(res, 64, fp)` keeps of a `\setshell` command's output.
const SHELL_RESULT_MAX: usize = 63;

/// Runs `cmd` and reads what `popen` + `fgets` + `pclose` read: the first line, at
/// most [`SHELL_RESULT_MAX`] bytes; then the pipe is closed (a command that writes on,
/// such as `yes`, ends on SIGPIPE) and the command waited for. `None` if it could not
/// be started.
fn first_line_of(mut cmd: std::process::Command) -> Option<Vec<u8>> {
    use std::io::{BufRead, Read};
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .ok()?;
    let mut first = Vec::with_capacity(SHELL_RESULT_MAX + 1);
    if let Some(out) = child.stdout.take() {
        let mut bounded = std::io::BufReader::new(out.take(SHELL_RESULT_MAX as u64));
        let _ = bounded.read_until(b'\n', &mut first);
    }
    let _ = child.wait();
    Some(first)
}

/// `sh -c <line>` as system() and popen() run it: the shell's own messages then begin
/// with `sh:`, not `/bin/sh:`.
fn shell_command(line: &str) -> std::process::Command {
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new("/bin/sh");
    cmd.arg0("sh").arg("-c").arg(line);
    cmd
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_commands_show_pgbench_argv_in_debug_lines() {
        use pgbench_script::ast::{Expr, Value};
        let expr = || Expr::Const(Value::Bool(true));
        let sleep = |unit_us| MetaCommand::Sleep {
            duration: SleepArg::Const(2),
            unit_us,
        };
        let shell = MetaCommand::Shell {
            command: "echo".into(),
            args: Vec::new(),
        };
        let cases = [
            (
                MetaCommand::Set {
                    var: "aid".into(),
                    expr: expr(),
                },
                "\\set aid random(1, 100000 * :scale)",
                "set aid",
            ),
            (MetaCommand::If(expr()), "\\if :x > 1", "if"),
            (MetaCommand::Elif(expr()), "\\ELIF 1", "ELIF"),
            (sleep(1000), "\\sleep 2ms", "sleep 2ms ms"),
            (sleep(1000), "\\sleep 2 ms", "sleep 2 ms"),
            (sleep(1_000_000), "\\sleep :x", "sleep :x"),
            (
                shell,
                "\\shell echo \\\n  ::foo\t:one",
                "shell echo ::foo :one",
            ),
        ];
        for (meta, line, want) in cases {
            assert_eq!(meta_argv(&meta, line), want, "for {line:?}");
        }
    }
}
