//! Where a results file goes, and writing it there whole: the one writer of
//! `--export-json`, `--export-html` and `pgbench-report -o`.
//!
//! A regular file (or a name nothing has yet) is written into a temporary file beside
//! it, synced and renamed over it, so a full disk or a kill never leaves half a file
//! under the name nor destroys the file that was there. Anything else is written in
//! place, as `>` in a shell would: a device (`/dev/null`), a pipe or FIFO
//! (`--export-json=/dev/stdout | jq`), a dangling symlink. A symlink to a regular file
//! keeps the link: the file it names is replaced. A destination that is this process's
//! standard output or error (`/dev/stdout`, even redirected to a file) is written to
//! that stream, after what was printed there.
//!
//! [`check`] tries the destination before a run, so that a typo costs a second, not the
//! hour's results: it creates and removes the temporary file, or opens the device. A
//! FIFO is checked without opening it (`stat` and `access`): opening and closing it
//! would hand a reader already waiting an end-of-file, and it would leave before the
//! results came.
//!
//! A FIFO is written once a reader has opened it, as `>` would, but without blocking
//! where a signal could not end the wait: it is opened non-blocking, again every
//! [`WAIT_STEP`] until a reader comes, and written as fast as its reader reads. The
//! writer's signal handler may tell its writes to give up waiting so
//! ([`Writes::give_up`]): a SIGTERM after the report ends the program, not a write
//! nobody will read.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Why a results file could not be written, in pgbench's words (`could not open
/// logfile "%s": %m`): the path as given and the C library's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error("could not open results file \"{path}\": {reason}")]
    Open { path: String, reason: String },
    #[error("could not write results file \"{path}\": {reason}")]
    Write { path: String, reason: String },
    /// A FIFO's write gave up on a signal ([`Writes::give_up`]).
    #[error("results file \"{path}\" not written: {} {reason}", signal_name(*signal))]
    Abandoned {
        path: String,
        signal: i32,
        reason: &'static str,
    },
}

fn signal_name(signal: i32) -> String {
    match signal {
        libc::SIGINT => "SIGINT".to_string(),
        libc::SIGTERM => "SIGTERM".to_string(),
        other => format!("signal {other}"),
    }
}

/// How often a FIFO's write tries again for a reader, and looks for a signal while
/// its reader is not reading.
pub const WAIT_STEP: Duration = Duration::from_millis(50);

/// The results files one writer (a run, `pgbench-report`) writes: the FIFO writes
/// that wait, and once a signal said to give up, that signal; and the temporary files
/// being written, to remove when the process must exit at once. Owned by the writer,
/// told by its signal handler.
#[derive(Debug, Default)]
pub struct Writes {
    under_way: AtomicUsize,
    given_up: AtomicI32,
    in_flight: Mutex<Vec<PathBuf>>,
}

impl Writes {
    pub fn new() -> Writes {
        Writes::default()
    }

    /// From now on a FIFO write gives up where it waits (for a reader, or for its
    /// reader to read), whether it waits already or comes to wait later: the process
    /// is ending.
    pub fn give_up(&self, signal: i32) {
        self.given_up.store(signal, Ordering::SeqCst);
    }

    /// The FIFO writes under way.
    pub fn under_way(&self) -> usize {
        self.under_way.load(Ordering::SeqCst)
    }

    fn given_up(&self) -> Option<i32> {
        Some(self.given_up.load(Ordering::SeqCst)).filter(|&s| s != 0)
    }

    /// Writes `text` to `path` whole (see the module's header for what "whole" means
    /// for each kind of destination).
    pub fn write(&self, path: &str, text: &[u8]) -> Result<(), WriteError> {
        self.write_with_notice(path, text, &mut || {})
    }

    /// [`Writes::write`], calling `waiting` once if the destination is a FIFO no reader
    /// has opened yet (so that the caller can say why nothing happens).
    pub fn write_with_notice(
        &self,
        path: &str,
        text: &[u8],
        waiting: &mut dyn FnMut(),
    ) -> Result<(), WriteError> {
        let open_error = |e: io::Error| WriteError::Open {
            path: path.to_string(),
            reason: strerror(&e),
        };
        let write_error = |e: io::Error| WriteError::Write {
            path: path.to_string(),
            reason: strerror(&e),
        };
        match way(Path::new(path)).map_err(open_error)? {
            Way::Replace(target) => self.replace(&target, text, open_error, write_error),
            Way::InPlace { fifo: true } => write_fifo(path, text, self, waiting),
            Way::InPlace { fifo: false } => {
                let mut file = open_in_place(Path::new(path)).map_err(open_error)?;
                file.write_all(text).map_err(write_error)
            }
            Way::Stream(fd) => {
                let written = if fd == 1 {
                    let mut out = io::stdout().lock();
                    out.write_all(text).and_then(|()| out.flush())
                } else {
                    io::stderr().lock().write_all(text)
                };
                written.map_err(write_error)
            }
        }
    }

    /// Removes the temporary files of writes under way; for a process about to exit.
    pub fn remove_unfinished(&self) {
        for f in self.in_flight().iter() {
            let _ = std::fs::remove_file(f);
        }
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, Vec<PathBuf>> {
        self.in_flight.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn replace(
        &self,
        target: &Path,
        text: &[u8],
        open_error: impl Fn(io::Error) -> WriteError,
        write_error: impl Fn(io::Error) -> WriteError,
    ) -> Result<(), WriteError> {
        let (tmp, mut file) = create_temporary(target).map_err(open_error)?;
        self.in_flight().push(tmp.clone());
        // The replaced file keeps its permissions.
        let keep_mode = std::fs::metadata(target)
            .map(|m| file.set_permissions(m.permissions()))
            .unwrap_or(Ok(()));
        let written = keep_mode
            .and_then(|()| file.write_all(text))
            .and_then(|()| file.sync_all())
            .and_then(|()| std::fs::rename(&tmp, target));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        self.in_flight().retain(|f| f != &tmp);
        written.map_err(write_error)
    }
}

/// Counts a FIFO write as under way while it lives.
struct UnderWay<'a>(&'a Writes);

impl<'a> UnderWay<'a> {
    fn new(writes: &'a Writes) -> Self {
        writes.under_way.fetch_add(1, Ordering::SeqCst);
        UnderWay(writes)
    }
}

impl Drop for UnderWay<'_> {
    fn drop(&mut self) {
        self.0.under_way.fetch_sub(1, Ordering::SeqCst);
    }
}

/// What a temporary file's name adds to the destination's, so that one left behind by
/// a `kill -9` at the rename says what it is (and the next write removes it).
const UNFINISHED: &str = ".pgbench-unfinished-";

/// How a destination is written.
#[derive(Debug, PartialEq, Eq)]
enum Way {
    /// Through a temporary file renamed over this regular (or missing) file.
    Replace(PathBuf),
    /// Opened and written as it is (device, FIFO, dangling symlink).
    InPlace { fifo: bool },
    /// This process's standard output (1) or error (2).
    Stream(i32),
}

/// Tries `path` as a destination without writing a results file there.
pub fn check(path: &str) -> Result<(), WriteError> {
    let open_error = |e: io::Error| WriteError::Open {
        path: path.to_string(),
        reason: strerror(&e),
    };
    match way(Path::new(path)).map_err(open_error)? {
        Way::Replace(target) => {
            let (tmp, _file) = create_temporary(&target).map_err(open_error)?;
            let _ = std::fs::remove_file(&tmp);
            Ok(())
        }
        // Whether a reader is there yet does not matter: it may come by the end.
        Way::InPlace { fifo: true } => {
            rustix::fs::access(path, rustix::fs::Access::WRITE_OK).map_err(|e| open_error(e.into()))
        }
        Way::InPlace { fifo: false } => {
            open_in_place(Path::new(path)).map(drop).map_err(open_error)
        }
        Way::Stream(_) => Ok(()),
    }
}

/// Writes `text` to `path` whole, on its own (see [`Writes::write`]).
pub fn write(path: &str, text: &[u8]) -> Result<(), WriteError> {
    Writes::new().write(path, text)
}

fn way(path: &Path) -> io::Result<Way> {
    let link = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Way::Replace(path.into())),
        Err(e) => return Err(e),
    };
    let meta = if link.file_type().is_symlink() {
        match std::fs::metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok(Way::InPlace { fifo: false })
            }
            Err(e) => return Err(e),
        }
    } else {
        link.clone()
    };
    if let Some(fd) = standard_stream(&meta) {
        return Ok(Way::Stream(fd));
    }
    let kind = meta.file_type();
    if kind.is_file() {
        let target = if link.file_type().is_symlink() {
            std::fs::canonicalize(path)?
        } else {
            path.into()
        };
        return Ok(Way::Replace(target));
    }
    if kind.is_dir() {
        return Err(io::Error::from_raw_os_error(libc::EISDIR));
    }
    Ok(Way::InPlace {
        fifo: kind.is_fifo(),
    })
}

/// Which of standard output and error `meta` describes, if either.
fn standard_stream(meta: &Metadata) -> Option<i32> {
    let same = |fd: std::os::fd::BorrowedFd<'_>| {
        let file = File::from(fd.try_clone_to_owned().ok()?);
        let m = file.metadata().ok()?;
        Some(m.dev() == meta.dev() && m.ino() == meta.ino())
    };
    if same(io::stdout().as_fd()) == Some(true) {
        Some(1)
    } else if same(io::stderr().as_fd()) == Some(true) {
        Some(2)
    } else {
        None
    }
}

/// Opens a destination that is neither replaced nor a FIFO: a device, or the file a
/// dangling symlink names.
fn open_in_place(path: &Path) -> io::Result<File> {
    OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
}

/// Writes `text` into the FIFO `path` once a reader has opened it, giving up where it
/// waits once `waits` says so (see the module's header).
fn write_fifo(
    path: &str,
    text: &[u8],
    waits: &Writes,
    waiting: &mut dyn FnMut(),
) -> Result<(), WriteError> {
    let _counted = UnderWay::new(waits);
    let abandoned = |signal, reason| WriteError::Abandoned {
        path: path.to_string(),
        signal,
        reason,
    };
    let mut told = false;
    let mut file = loop {
        let opened = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path);
        match opened {
            Ok(file) => break file,
            // No reader yet.
            Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {}
            Err(e) => {
                return Err(WriteError::Open {
                    path: path.to_string(),
                    reason: strerror(&e),
                })
            }
        }
        if let Some(signal) = waits.given_up() {
            return Err(abandoned(signal, "before a reader opened the FIFO"));
        }
        if !told {
            waiting();
            told = true;
        }
        std::thread::sleep(WAIT_STEP);
    };
    let mut rest = text;
    while !rest.is_empty() {
        match file.write(rest) {
            Ok(n) => rest = &rest[n..],
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                if let Some(signal) = waits.given_up() {
                    return Err(abandoned(
                        signal,
                        "while the FIFO's reader had not read it all",
                    ));
                }
                writable_within(&file, WAIT_STEP);
            }
            Err(e) => {
                return Err(WriteError::Write {
                    path: path.to_string(),
                    reason: strerror(&e),
                })
            }
        }
    }
    Ok(())
}

/// Waits up to `step` for `file` to take more bytes (or its reader to leave, which
/// the next write then says).
fn writable_within(file: &File, step: Duration) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let timeout = Timespec {
        tv_sec: step.as_secs() as _,
        tv_nsec: step.subsec_nanos() as _,
    };
    let mut fds = [PollFd::new(file, PollFlags::OUT)];
    // An error (EINTR) only shortens the wait: the write tries again.
    let _ = poll(&mut fds, Some(&timeout));
}

/// The temporary file beside `target`, created anew (and the stale ones of earlier
/// processes removed).
fn create_temporary(target: &Path) -> io::Result<(PathBuf, File)> {
    remove_stale(target);
    let mut name = target.file_name().unwrap_or_default().to_os_string();
    name.push(format!("{UNFINISHED}{}", std::process::id()));
    let tmp = target.with_file_name(name);
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o666)
        .open(&tmp)?;
    Ok((tmp, file))
}

/// Removes the temporary files a killed process left for `target`: those whose process
/// is gone.
fn remove_stale(target: &Path) {
    let (Some(dir), Some(name)) = (target.parent(), target.file_name()) else {
        return;
    };
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let prefix = format!("{}{UNFINISHED}", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let file = entry.file_name();
        let Some(pid) = file.to_str().and_then(|f| f.strip_prefix(&prefix)) else {
            continue;
        };
        let alive = pid
            .parse::<u32>()
            .is_ok_and(|p| Path::new(&format!("/proc/{p}")).exists());
        if !alive {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The C library's message for `e`, as pgbench's `%m` prints it (without the
/// " (os error N)" Rust adds).
pub fn strerror(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => text[..at].to_string(),
        _ => text,
    }
}

#[cfg(test)]
mod tests;
