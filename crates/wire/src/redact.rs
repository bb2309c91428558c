//! Keeping passwords out of what is recorded or shown: a conninfo string's or URI's
//! `password` and `sslpassword` values replaced by a mask, the rest left as written,
//! as libpq marks those keywords "display as `*`" and psql never prints them.

use crate::conninfo::{is_connection_string, next_pair, uri_decode, uri_prefix_len, uri_user_info};

/// What a secret is shown as.
pub const MASK: &str = "********";

/// The keywords whose values are secrets.
const SECRET_KEYWORDS: &[&str] = &["password", "sslpassword"];

/// `s` with the value of every secret keyword masked when it is a conninfo string or a
/// URI (however malformed: what follows a secret keyword whose value cannot be read is
/// masked too); any other text unchanged.
pub fn redact_secrets(s: &str) -> String {
    if !is_connection_string(s) {
        return s.to_string();
    }
    let secrets = if uri_prefix_len(s) > 0 {
        uri_secrets(s)
    } else {
        conninfo_secrets(s)
    };
    let mut out = String::with_capacity(s.len());
    let mut from = 0;
    for range in secrets {
        out.push_str(&s[from..range.start]);
        out.push_str(MASK);
        from = range.end;
    }
    out.push_str(&s[from..]);
    out
}

fn is_secret(name: &str) -> bool {
    SECRET_KEYWORDS.contains(&name)
}

/// Where the secret values of a conninfo string are written, in order.
fn conninfo_secrets(s: &str) -> Vec<std::ops::Range<usize>> {
    let mut secrets = Vec::new();
    let mut at = 0;
    loop {
        match next_pair(s, &mut at) {
            Ok(Some(pair)) if is_secret(&pair.name) => secrets.push(pair.written),
            Ok(Some(_)) => {}
            Ok(None) => break,
            Err(e) => {
                if let (true, Some(start)) = (is_secret(&e.name), e.value_start) {
                    secrets.push(start..s.len());
                }
                break;
            }
        }
    }
    secrets
}

/// Where the secret values of a URI are written: the password of `user:password@` and
/// the values of secret query parameters (their keys percent-decoded, as libpq reads
/// them).
fn uri_secrets(s: &str) -> Vec<std::ops::Range<usize>> {
    let info = uri_user_info(s.as_bytes(), uri_prefix_len(s));
    let mut secrets: Vec<_> = info.password.into_iter().collect();
    let Some(query) = s[info.hosts_start..].find('?') else {
        return secrets;
    };
    let mut start = info.hosts_start + query + 1;
    for param in s[start..].split('&') {
        if let Some((written, _)) = param.split_once('=') {
            let key = uri_decode(written).unwrap_or_else(|_| written.to_string());
            if is_secret(&key) {
                secrets.push(start + written.len() + 1..start + param.len());
            }
        }
        start += param.len() + 1;
    }
    secrets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conninfo_secrets_are_masked_and_the_rest_kept() {
        assert_eq!(
            redact_secrets("host=h password=s3cret user=u"),
            "host=h password=******** user=u"
        );
        assert_eq!(
            redact_secrets(r"password = 'my \'s3cret' sslpassword=k dbname=x"),
            "password = ******** sslpassword=******** dbname=x"
        );
        assert_eq!(redact_secrets("password=a\\ b"), "password=********");
        // Broken strings: what follows a secret keyword is masked to the end.
        assert_eq!(
            redact_secrets("host=h password='s3cret"),
            "host=h password=********"
        );
        assert_eq!(redact_secrets("password"), "password");
        // Not connection strings, or no secret in them.
        for s in ["postgres", "-Dpassword=x", "--define=password=x", "host=h"] {
            assert_eq!(redact_secrets(s), s);
        }
    }

    #[test]
    fn uri_secrets_are_masked_and_the_rest_kept() {
        assert_eq!(
            redact_secrets("postgresql://u:s3cret@h:5/db"),
            "postgresql://u:********@h:5/db"
        );
        assert_eq!(
            redact_secrets(
                "postgres://u:p%3Aw?@h/db?sslmode=require&pass%77ord=s3cret&sslpassword=k"
            ),
            "postgres://u:********@h/db?sslmode=require&pass%77ord=********&sslpassword=********"
        );
        assert_eq!(
            redact_secrets("postgresql://u@h/db?password=x=y"),
            "postgresql://u@h/db?password=********"
        );
        for s in [
            "postgresql://u@h/db",
            "postgresql://h/?password",
            "postgresql://",
        ] {
            assert_eq!(redact_secrets(s), s);
        }
    }
}
