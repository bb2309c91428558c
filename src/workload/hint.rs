//! The command lines a workload's messages suggest ("prepare the tables with ...",
//! "run ... again"): the program, the workload's own options, then the connection
//! options the user gave (`-h`, `-p`, `-U`, the database name), quoted as a shell
//! takes them, so the line can be pasted as it is. A password in a connection string
//! is masked, as everywhere else pgbench-rs shows one.

use pgbench_wire::ConnectArgs;

/// `PROGNAME -i --workload=NAME OPTIONS` with the connection options of `conn`.
pub fn prepare_command(workload: &str, options: &str, conn: &ConnectArgs) -> String {
    let mut words = vec![
        crate::logging::progname().to_string(),
        "-i".to_string(),
        format!("--workload={workload}"),
    ];
    if !options.is_empty() {
        words.push(options.to_string());
    }
    words.extend(connection_words(conn));
    words.join(" ")
}

/// `-h HOST -p PORT -U USER DBNAME`, each as given (none when not given).
fn connection_words(conn: &ConnectArgs) -> Vec<String> {
    let mut words = Vec::new();
    for (flag, value) in [("-h", &conn.host), ("-p", &conn.port), ("-U", &conn.user)] {
        if let Some(v) = value {
            words.push(format!("{flag} {}", shell_word(v)));
        }
    }
    if let Some(db) = &conn.dbname {
        words.push(shell_word(&pgbench_wire::redact_secrets(db)));
    }
    words
}

/// `s` as one shell word: as it is when it holds only characters no shell treats
/// specially, else in single quotes.
fn shell_word(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"_-./:=@%+,".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_repeats_the_connection_options_quoted_and_masked() {
        let p = crate::logging::progname();
        let conn = ConnectArgs {
            host: Some("/tmp/my socket".into()),
            port: Some("5433".into()),
            user: Some("bench".into()),
            dbname: Some("host=db password=secret dbname=sb".into()),
            ..ConnectArgs::default()
        };
        assert_eq!(
            prepare_command("tpcc", "-s WAREHOUSES", &conn),
            format!(
                "{p} -i --workload=tpcc -s WAREHOUSES -h '/tmp/my socket' -p 5433 -U bench \
                 'host=db password=******** dbname=sb'"
            )
        );
        let plain = ConnectArgs {
            dbname: Some("sbtest".into()),
            ..ConnectArgs::default()
        };
        assert_eq!(
            prepare_command("oltp_insert", "", &plain),
            format!("{p} -i --workload=oltp_insert sbtest")
        );
        assert_eq!(shell_word("it's"), r"'it'\''s'");
    }
}
