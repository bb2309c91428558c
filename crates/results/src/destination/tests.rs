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

#[test]
fn a_fifo_is_written_for_its_reader_and_checked_without_one() {
    let d = dir();
    let fifo = d.path().join("pipe");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
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
