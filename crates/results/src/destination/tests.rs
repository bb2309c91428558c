use super::*;
use std::os::unix::fs::PermissionsExt;
use std::process::Command;

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A device node like the system's, made in `dir` (mknod needs root).
fn device(dir: &Path, name: &str, minor: &str) -> Option<PathBuf> {
    let path = dir.join(name);
    let made = Command::new("mknod")
        .arg(&path)
        .args(["c", "1", minor])
        .status()
        .is_ok_and(|s| s.success());
    if made {
        return Some(path);
    }
    assert!(
        std::env::var("CI").as_deref() != Ok("true"),
        "mknod failed: run as root"
    );
    eprintln!("skipped: mknod needs root");
    None
}

#[test]
fn a_missing_file_is_written_and_nothing_else_is_left() {
    let d = dir();
    let path = s(&d.path().join("r.json"));
    check(&path).unwrap();
    assert_eq!(names(d.path()), Vec::<String>::new());
    write(&path, b"{}").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "{}");
    assert_eq!(names(d.path()), ["r.json"]);
}

#[test]
fn a_regular_file_is_replaced_and_keeps_its_permissions() {
    let d = dir();
    let path = d.path().join("r.json");
    std::fs::write(&path, "old and longer").unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let before = std::fs::metadata(&path).unwrap().ino();
    write(&s(&path), b"new").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
    let after = std::fs::metadata(&path).unwrap();
    assert_ne!(after.ino(), before, "written into a new file, renamed");
    assert_eq!(after.permissions().mode() & 0o777, 0o640);
}

#[test]
fn a_device_stays_a_device() {
    let d = dir();
    let Some(null) = device(d.path(), "null", "3") else {
        return;
    };
    check(&s(&null)).unwrap();
    write(&s(&null), b"{}").unwrap();
    let meta = std::fs::symlink_metadata(&null).unwrap();
    assert!(meta.file_type().is_char_device(), "{meta:?}");
    assert_eq!(names(d.path()), ["null"]);
}

#[test]
fn a_full_device_says_so_in_the_c_librarys_words() {
    let d = dir();
    let Some(full) = device(d.path(), "full", "7") else {
        return;
    };
    let err = write(&s(&full), b"{}").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "could not write results file \"{}\": No space left on device",
            s(&full)
        )
    );
}

#[test]
fn a_symlink_keeps_pointing_at_the_file_it_names() {
    let d = dir();
    let target = d.path().join("real.json");
    std::fs::write(&target, "old").unwrap();
    let link = d.path().join("link.json");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    write(&s(&link), b"new").unwrap();
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
    // A dangling one: the file it names is created.
    let gone = d.path().join("gone.json");
    let dangling = d.path().join("dangling.json");
    std::os::unix::fs::symlink(&gone, &dangling).unwrap();
    write(&s(&dangling), b"x").unwrap();
    assert_eq!(std::fs::read_to_string(&gone).unwrap(), "x");
    assert!(std::fs::symlink_metadata(&dangling)
        .unwrap()
        .file_type()
        .is_symlink());
}

fn mkfifo(dir: &Path) -> PathBuf {
    let fifo = dir.join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    fifo
}

/// A reader of `fifo` there from now on, which has read nothing: opened without
/// waiting for a writer.
fn reader(fifo: &Path) -> File {
    OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(fifo)
        .unwrap()
}

/// What `reader` has been told so far, without waiting: POLLHUP once a writer came
/// and went.
fn events(reader: &File) -> rustix::event::PollFlags {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut fds = [PollFd::new(reader, PollFlags::IN)];
    let zero = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    poll(&mut fds, Some(&zero)).unwrap();
    fds[0].revents()
}

#[test]
fn a_fifo_is_written_for_its_reader_and_checked_without_one() {
    let d = dir();
    let fifo = mkfifo(d.path());
    // No reader yet: the check does not wait for one, nor fail.
    check(&s(&fifo)).unwrap();
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    write(&s(&fifo), b"{\"a\":1}").unwrap();
    assert_eq!(reader.join().unwrap(), "{\"a\":1}");
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

/// #38: the check opened and closed the FIFO, so a reader already there got
/// end-of-file and left, and the write after the run then waited for ever. The
/// check now neither opens it nor tells the reader anything; the reader gets the
/// whole file.
#[test]
fn a_fifo_reader_waiting_before_the_check_gets_the_file() {
    let d = dir();
    let fifo = mkfifo(d.path());
    let mut reader = reader(&fifo);
    check(&s(&fifo)).unwrap();
    assert!(
        events(&reader).is_empty(),
        "the check told the reader something: {:?}",
        events(&reader)
    );
    let text = "{\"a\":1}\n".repeat(10);
    write(&s(&fifo), text.as_bytes()).unwrap();
    let mut got = String::new();
    std::io::Read::read_to_string(&mut reader, &mut got).unwrap();
    assert_eq!(got, text);
    // The check still refuses a FIFO it may not write to, by its permissions.
    std::fs::set_permissions(&fifo, std::fs::Permissions::from_mode(0o444)).unwrap();
    // Root may write anyway; /proc/self belongs to the effective user.
    let root = std::fs::metadata("/proc/self").unwrap().uid() == 0;
    if !root {
        assert!(check(&s(&fifo))
            .unwrap_err()
            .to_string()
            .ends_with("Permission denied"));
    }
}

/// #38: a write waiting for a FIFO's reader, or for its reader to read, gives up
/// when told to (the signal thread does so for SIGINT and SIGTERM after the report).
#[test]
fn a_fifo_write_waiting_gives_up_when_told() {
    let d = dir();
    let fifo = mkfifo(d.path());
    // No reader ever: the write says it waits, then gives up when told.
    let waits = std::sync::Arc::new(Writes::new());
    let (told, waiting) = std::sync::mpsc::channel();
    let writer = {
        let (fifo, waits) = (s(&fifo), waits.clone());
        std::thread::spawn(move || write_fifo(&fifo, b"{}", &waits, &mut || told.send(()).unwrap()))
    };
    waiting.recv().unwrap();
    waits.give_up(libc::SIGTERM);
    let e = writer.join().unwrap().unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "results file \"{}\" not written: SIGTERM before a reader opened the FIFO",
            s(&fifo)
        )
    );
    assert!(matches!(
        e,
        WriteError::Abandoned {
            signal: libc::SIGTERM,
            ..
        }
    ));
    // A reader that does not read: the write fills the pipe, then waits for it.
    let _reader = reader(&fifo);
    let waits = std::sync::Arc::new(Writes::new());
    let writer = {
        let (fifo, waits) = (s(&fifo), waits.clone());
        std::thread::spawn(move || write_fifo(&fifo, &[b' '; 1 << 20], &waits, &mut || {}))
    };
    while waits.under_way() == 0 {
        std::thread::yield_now();
    }
    waits.give_up(libc::SIGINT);
    let e = writer.join().unwrap().unwrap_err().to_string();
    assert!(
        e.ends_with("not written: SIGINT while the FIFO's reader had not read it all"),
        "{e}"
    );
}

/// A reader that leaves before it has read everything: the write says so.
#[test]
fn a_fifo_reader_that_leaves_early_is_a_write_error() {
    let d = dir();
    let fifo = mkfifo(d.path());
    let reader = reader(&fifo);
    let waits = std::sync::Arc::new(Writes::new());
    let writer = {
        let (fifo, waits) = (s(&fifo), waits.clone());
        std::thread::spawn(move || write_fifo(&fifo, &[b' '; 1 << 20], &waits, &mut || {}))
    };
    // Once the writer has written, its reader leaves.
    while !events(&reader).contains(rustix::event::PollFlags::IN) {
        std::thread::yield_now();
    }
    drop(reader);
    let e = writer.join().unwrap().unwrap_err().to_string();
    assert!(e.ends_with("Broken pipe"), "{e}");
}

#[test]
fn a_bad_destination_is_named_with_the_os_message() {
    let d = dir();
    let missing = s(&d.path().join("no/such/dir/r.json"));
    assert_eq!(
        check(&missing).unwrap_err().to_string(),
        format!("could not open results file \"{missing}\": No such file or directory")
    );
    assert!(write(&missing, b"{}").is_err());
    let directory = s(d.path());
    assert_eq!(
        check(&directory).unwrap_err().to_string(),
        format!("could not open results file \"{directory}\": Is a directory")
    );
    assert_eq!(names(d.path()), Vec::<String>::new());
}

#[test]
fn a_killed_writers_temporary_file_is_removed_by_the_next_write() {
    let d = dir();
    let path = d.path().join("r.json");
    // pid_max is at most 2^22: no process has this one.
    let stale = d.path().join(format!("r.json{UNFINISHED}99999999"));
    std::fs::write(&stale, "half").unwrap();
    // A live process's (pid 1) is left alone, as is another destination's.
    let live = d.path().join(format!("r.json{UNFINISHED}1"));
    std::fs::write(&live, "busy").unwrap();
    let other = d.path().join(format!("s.json{UNFINISHED}99999999"));
    std::fs::write(&other, "other").unwrap();
    write(&s(&path), b"{}").unwrap();
    assert!(!stale.exists());
    assert!(live.exists() && other.exists());
}

#[test]
fn strerror_drops_the_rust_suffix() {
    let e = io::Error::from_raw_os_error(libc::ENOSPC);
    assert_eq!(strerror(&e), "No space left on device");
}

/// #38: a signal after the report but before a FIFO's write began was lost, and the
/// write then waited for a reader until a second signal. Giving up holds for the
/// writes still to come.
#[test]
fn a_fifo_write_begun_after_the_signal_gives_up_at_once() {
    let d = dir();
    let fifo = mkfifo(d.path());
    let writes = Writes::new();
    writes.give_up(libc::SIGTERM);
    let e = writes.write(&s(&fifo), b"{}").unwrap_err();
    assert!(
        matches!(
            e,
            WriteError::Abandoned {
                signal: libc::SIGTERM,
                ..
            }
        ),
        "{e}"
    );
}
