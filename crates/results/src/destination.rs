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
//! hour's results: it creates and removes the temporary file, or opens the device.

use std::fs::{File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Why a results file could not be written, in pgbench's words (`could not open
/// logfile "%s": %m`): the path as given and the C library's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WriteError {
    #[error("could not open results file \"{path}\": {reason}")]
    Open { path: String, reason: String },
    #[error("could not write results file \"{path}\": {reason}")]
    Write { path: String, reason: String },
}

/// What a temporary file's name adds to the destination's, so that one left behind by
/// a `kill -9` at the rename says what it is (and the next write removes it).
const UNFINISHED: &str = ".pgbench-unfinished-";

/// Temporary files being written now, removed by [`remove_unfinished`] when the
/// process must exit at once.
static IN_FLIGHT: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

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
        Way::InPlace { fifo } => match open_in_place(Path::new(path), fifo, true) {
            // A FIFO nobody reads yet: its reader may come by the end of the run.
            Err(e) if fifo && e.raw_os_error() == Some(libc::ENXIO) => Ok(()),
            other => other.map(drop).map_err(open_error),
        },
        Way::Stream(_) => Ok(()),
    }
}

/// Writes `text` to `path` whole (see the module's header for what "whole" means for
/// each kind of destination).
pub fn write(path: &str, text: &[u8]) -> Result<(), WriteError> {
    let open_error = |e: io::Error| WriteError::Open {
        path: path.to_string(),
        reason: strerror(&e),
    };
    let write_error = |e: io::Error| WriteError::Write {
        path: path.to_string(),
        reason: strerror(&e),
    };
    match way(Path::new(path)).map_err(open_error)? {
        Way::Replace(target) => replace(&target, text, open_error, write_error),
        Way::InPlace { fifo } => {
            let mut file = open_in_place(Path::new(path), fifo, false).map_err(open_error)?;
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
pub fn remove_unfinished() {
    if let Ok(files) = IN_FLIGHT.lock() {
        for f in files.iter() {
            let _ = std::fs::remove_file(f);
        }
    }
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

/// Opens a destination that is not replaced. A check opens a FIFO without waiting for
/// a reader; the write waits for one, as `>` does.
fn open_in_place(path: &Path, fifo: bool, checking: bool) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true);
    if !fifo {
        // Only a dangling symlink gets here without an existing file.
        options.create(true).truncate(true);
    }
    if fifo && checking {
        options.custom_flags(libc::O_NONBLOCK);
    }
    options.open(path)
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

fn replace(
    target: &Path,
    text: &[u8],
    open_error: impl Fn(io::Error) -> WriteError,
    write_error: impl Fn(io::Error) -> WriteError,
) -> Result<(), WriteError> {
    let (tmp, mut file) = create_temporary(target).map_err(open_error)?;
    if let Ok(mut files) = IN_FLIGHT.lock() {
        files.push(tmp.clone());
    }
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
    if let Ok(mut files) = IN_FLIGHT.lock() {
        files.retain(|f| f != &tmp);
    }
    written.map_err(write_error)
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
