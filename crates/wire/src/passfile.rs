//! The two client-side files libpq reads for defaults: the password file (`~/.pgpass` or
//! `PGPASSFILE`/`passfile`) and the connection service file (`~/.pg_service.conf` or
//! `PGSERVICEFILE`, then `PGSYSCONFDIR/pg_service.conf`), with libpq's matching rules,
//! escapes, warnings and error texts.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use crate::conninfo::{keyword_index, Values};

/// Debian's libpq looks for the system-wide service file here (its `SYSCONFDIR`).
pub(crate) const SYSCONFDIR: &str = "/etc/postgresql-common";

/// libpq's compiled-in socket directory on Debian.
pub(crate) const DEFAULT_SOCKET_DIR: &str = "/var/run/postgresql";

/// Looks up a password for (host, port, dbname, user), like libpq's `passwordFromFile`.
/// Prints libpq's warnings to stderr for a file that is not plain or is readable by
/// others (and ignores it then).
pub(crate) fn password_from_file(
    path: &Path,
    host: &str,
    port: &str,
    dbname: &str,
    user: &str,
) -> Option<String> {
    // "localhost" in the file matches an empty host and the default socket directory.
    let host = if host.is_empty() || (host.starts_with('/') && host == DEFAULT_SOCKET_DIR) {
        "localhost"
    } else {
        host
    };
    let port = if port.is_empty() { "5432" } else { port };
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        eprintln!(
            "WARNING: password file \"{}\" is not a plain file",
            path.display()
        );
        return None;
    }
    if meta.permissions().mode() & 0o077 != 0 {
        eprintln!(
            "WARNING: password file \"{}\" has group or world access; permissions should be u=rw (0600) or less",
            path.display()
        );
        return None;
    }
    let content = fs::read(path).ok()?;
    for raw in content.split(|&b| b == b'\n') {
        let mut line = raw;
        while let [rest @ .., b'\r'] = line {
            line = rest;
        }
        if line.is_empty() || line[0] == b'#' {
            continue;
        }
        let rest = [host, port, dbname, user]
            .iter()
            .try_fold(line, |rest, token| field_matches(rest, token.as_bytes()));
        if let Some(pw) = rest {
            let mut out = Vec::with_capacity(pw.len());
            let mut i = 0;
            while i < pw.len() && pw[i] != b':' {
                if pw[i] == b'\\' && i + 1 < pw.len() {
                    i += 1;
                }
                out.push(pw[i]);
                i += 1;
            }
            return Some(String::from_utf8_lossy(&out).into_owned());
        }
    }
    None
}

/// Matches one `:`-terminated field (with `\` escapes, `*` wildcard) against `token`;
/// returns the rest of the line after the field's `:`.
fn field_matches<'a>(buf: &'a [u8], token: &[u8]) -> Option<&'a [u8]> {
    if buf.is_empty() {
        return None;
    }
    if buf.starts_with(b"*:") {
        return Some(&buf[2..]);
    }
    let (mut i, mut t) = (0usize, 0usize);
    let mut escaped = false;
    while i < buf.len() {
        if buf[i] == b'\\' && !escaped {
            i += 1;
            escaped = true;
            if i >= buf.len() {
                return None;
            }
        }
        if buf[i] == b':' && t == token.len() && !escaped {
            return Some(&buf[i + 1..]);
        }
        escaped = false;
        if t == token.len() || buf[i] != token[t] {
            return None;
        }
        i += 1;
        t += 1;
    }
    None
}

/// Fills unset `values` from the service named by `service` (keyword or PGSERVICE),
/// like libpq's `parseServiceInfo`.
pub(crate) fn apply_service(
    values: &mut Values,
    env: &dyn Fn(&str) -> Option<String>,
    home: Option<&Path>,
) -> Result<(), String> {
    let service = match values
        .get("service")
        .map(str::to_string)
        .or_else(|| env("PGSERVICE"))
    {
        Some(s) => s,
        None => return Ok(()),
    };
    let user_file = match env("PGSERVICEFILE") {
        Some(f) => Some(std::path::PathBuf::from(f)),
        None => home.map(|h| h.join(".pg_service.conf")),
    };
    if let Some(file) = user_file.filter(|f| f.exists()) {
        if parse_service_file(&file, &service, values)? {
            return Ok(());
        }
    }
    let sysconf = env("PGSYSCONFDIR").unwrap_or_else(|| SYSCONFDIR.to_string());
    let file = Path::new(&sysconf).join("pg_service.conf");
    if file.exists() && parse_service_file(&file, &service, values)? {
        return Ok(());
    }
    Err(format!("definition of service \"{service}\" not found"))
}

/// libpq's line buffer for service files (`char buf[1024]`).
const SERVICE_LINE_MAX: usize = 1024;

/// Returns whether the `[service]` group was found; sets only values not yet set.
fn parse_service_file(path: &Path, service: &str, values: &mut Values) -> Result<bool, String> {
    use std::io::{BufRead, Read};
    let file = fs::File::open(path)
        .map_err(|_| format!("service file \"{}\" not found", path.display()))?;
    let mut reader = std::io::BufReader::new(file);
    let mut found = false;
    let mut raw = Vec::with_capacity(SERVICE_LINE_MAX);
    for line_no in 1.. {
        // libpq's fgets into a 1024-byte buffer: 1023 bytes or more (the newline
        // counted) is an error, so a file without newlines (/dev/zero) costs 1 KiB,
        // not all memory.
        raw.clear();
        let read = (&mut reader)
            .take(SERVICE_LINE_MAX as u64 - 1)
            .read_until(b'\n', &mut raw)
            .map_err(|e| format!("could not read service file \"{}\": {e}", path.display()))?;
        if read == 0 {
            break;
        }
        if raw.len() >= SERVICE_LINE_MAX - 1 {
            return Err(format!(
                "line {line_no} too long in service file \"{}\"",
                path.display()
            ));
        }
        let line = String::from_utf8_lossy(&raw);
        let line = line.trim_matches(|c: char| c.is_ascii_whitespace());
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(group) = line.strip_prefix('[') {
            if found {
                return Ok(true);
            }
            found = group.starts_with(service) && group[service.len()..].starts_with(']');
            continue;
        }
        if !found {
            continue;
        }
        let syntax = || {
            format!(
                "syntax error in service file \"{}\", line {line_no}",
                path.display()
            )
        };
        let (key, value) = line.split_once('=').ok_or_else(syntax)?;
        if key == "service" {
            return Err(format!(
                "nested service specifications not supported in service file \"{}\", line {line_no}",
                path.display()
            ));
        }
        let index = keyword_index(key).ok_or_else(syntax)?;
        if values.0[index].is_none() {
            values.0[index] = Some(value.to_string());
        }
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn pgpass(content: &str, mode: u32) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content.as_bytes()).unwrap();
        fs::set_permissions(f.path(), fs::Permissions::from_mode(mode)).unwrap();
        f
    }

    #[test]
    fn pgpass_matching_rules() {
        let f = pgpass(
            "# comment\nother:5432:*:*:no\nlocalhost:5432:db:u:sock\\:pw\r\n/run/x:*:*:*:dir\\\\pw:extra\n*:*:*:*:any\n",
            0o600,
        );
        let p = f.path();
        assert_eq!(
            password_from_file(p, DEFAULT_SOCKET_DIR, "", "db", "u").as_deref(),
            Some("sock:pw")
        );
        assert_eq!(
            password_from_file(p, "", "5432", "db", "u").as_deref(),
            Some("sock:pw")
        );
        assert_eq!(
            password_from_file(p, "/run/x", "1", "d", "u").as_deref(),
            Some("dir\\pw")
        );
        assert_eq!(
            password_from_file(p, "h", "1", "d", "u").as_deref(),
            Some("any")
        );
        assert_eq!(
            password_from_file(p, "other", "5432", "d", "u").as_deref(),
            Some("no")
        );
    }

    #[test]
    fn pgpass_escaped_colon_in_host_and_no_match() {
        let f = pgpass("a\\:b:1:d:u:pw\n", 0o600);
        assert_eq!(
            password_from_file(f.path(), "a:b", "1", "d", "u").as_deref(),
            Some("pw")
        );
        assert_eq!(password_from_file(f.path(), "a", "1", "d", "u"), None);
        assert_eq!(password_from_file(f.path(), "a:b", "1", "d", "v"), None);
    }

    #[test]
    fn pgpass_readable_by_others_is_ignored() {
        let f = pgpass("*:*:*:*:pw\n", 0o644);
        assert_eq!(password_from_file(f.path(), "h", "1", "d", "u"), None);
    }

    #[test]
    fn service_file_fills_unset_values() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("svc.conf");
        fs::write(
            &file,
            "# c\n[other]\nport=1\n[mine]\n  host=/tmp/x  \nport=7\ndbname=d\n[later]\nuser=z\n",
        )
        .unwrap();
        let f = file.to_string_lossy().into_owned();
        let env = move |k: &str| match k {
            "PGSERVICEFILE" => Some(f.clone()),
            "PGSYSCONFDIR" => Some("/nonexistent".into()),
            _ => None,
        };
        let mut v = Values::new();
        v.store("service", "mine").unwrap();
        v.store("port", "9").unwrap();
        apply_service(&mut v, &env, None).unwrap();
        assert_eq!(v.get("host"), Some("/tmp/x"));
        assert_eq!(v.get("port"), Some("9"));
        assert_eq!(v.get("dbname"), Some("d"));
        assert_eq!(v.get("user"), None);

        let mut v = Values::new();
        v.store("service", "nosuch").unwrap();
        assert_eq!(
            apply_service(&mut v, &env, None).unwrap_err(),
            "definition of service \"nosuch\" not found"
        );
    }

    #[test]
    fn service_file_errors() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("svc.conf");
        fs::write(&file, "[s]\nhost=x\nbogus line\n").unwrap();
        let f = file.to_string_lossy().into_owned();
        let env = move |k: &str| (k == "PGSERVICEFILE").then(|| f.clone());
        let mut v = Values::new();
        v.store("service", "s").unwrap();
        let e = apply_service(&mut v, &env, None).unwrap_err();
        assert_eq!(
            e,
            format!(
                "syntax error in service file \"{}\", line 3",
                file.display()
            )
        );
        fs::write(&file, "[s]\nservice=t\n").unwrap();
        let e = apply_service(&mut v, &env, None).unwrap_err();
        assert!(
            e.starts_with("nested service specifications not supported"),
            "{e}"
        );
        // libpq's 1024-byte line buffer: 1022 characters and the newline are too many.
        fs::write(&file, format!("[s]\nhost={}\n", "x".repeat(1017))).unwrap();
        let e = apply_service(&mut v, &env, None).unwrap_err();
        assert_eq!(
            e,
            format!("line 2 too long in service file \"{}\"", file.display())
        );
        fs::write(&file, format!("[s]\nhost={}\n", "x".repeat(1016))).unwrap();
        apply_service(&mut Values::new(), &env, None).unwrap();
    }

    #[test]
    fn an_endless_service_file_is_read_one_line_buffer_at_most() {
        // /dev/zero: no newline ever. Read whole, it took all memory.
        let env = |k: &str| (k == "PGSERVICEFILE").then(|| "/dev/zero".to_string());
        let mut v = Values::new();
        v.store("service", "s").unwrap();
        assert_eq!(
            apply_service(&mut v, &env, None).unwrap_err(),
            "line 1 too long in service file \"/dev/zero\""
        );
    }
}
