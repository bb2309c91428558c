//! Tokenising the command line the way pgbench's `getopt_long` does, with clap.
//!
//! clap splits the words (short bundles, `-c5`, `--client=5`, unambiguous long-option
//! prefixes, options after the database name); this module hands back every option in
//! command-line order, because pgbench acts on each option as it meets it (a script is
//! parsed when its `-f` is seen, so its errors come before those of later options).
//! getopt's own complaints are reproduced word for word: they name `argv[0]` as invoked.

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{Arg, ArgAction, Command};

pub use super::option_table::Opt;
use super::option_table::{OptionSpec, OPTIONS, PGBENCH_15_OPTIONS};

/// One option occurrence, in command-line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    pub opt: Opt,
    pub value: Option<String>,
}

/// The command line split into options (in order) and positional words.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Tokens {
    pub options: Vec<Occurrence>,
    pub positionals: Vec<String>,
}

/// getopt's complaint, already worded as getopt prints it (`<argv0>: ...`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetoptError(pub String);

fn command() -> Command {
    let mut cmd = Command::new("pgbench")
        .no_binary_name(true)
        .disable_help_flag(true)
        .disable_version_flag(true)
        .infer_long_args(true)
        .arg(
            Arg::new("dbname")
                .num_args(0..)
                .action(ArgAction::Append)
                .allow_hyphen_values(false),
        );
    for &OptionSpec {
        opt,
        short,
        long,
        takes_value,
        ..
    } in OPTIONS
    {
        let mut arg = Arg::new(long).long(long);
        if let Some(c) = short {
            arg = arg.short(c);
        }
        arg = if takes_value {
            // getopt takes the next word as the value whatever it looks like (`-c -5`).
            let a = arg
                .action(ArgAction::Append)
                .num_args(1)
                .allow_hyphen_values(true);
            if opt == Opt::LatencyPercentiles || opt == Opt::History {
                // `--latency-percentiles` alone means the default list; `--history`
                // alone, the default store.
                a.num_args(0..=1)
                    .require_equals(true)
                    .default_missing_value("")
            } else {
                a
            }
        } else {
            // Append (not Count) keeps the position of every repetition: `-S -S` is
            // two scripts, and only positions order them among the other options.
            arg.action(ArgAction::Append)
                .num_args(0)
                .default_missing_value("")
        };
        cmd = cmd.arg(arg);
    }
    cmd
}

/// Splits `args` (without `argv[0]`) into options and positionals. `argv0` is only used in
/// getopt's complaints.
pub fn tokenize(argv0: &str, args: &[String]) -> Result<Tokens, GetoptError> {
    let matches = command()
        .try_get_matches_from(with_stock_prefixes(args))
        .map_err(|e| GetoptError(getopt_message(argv0, args, &e)))?;
    let mut found: Vec<(usize, Occurrence)> = Vec::new();
    for &OptionSpec {
        opt,
        long,
        takes_value,
        ..
    } in OPTIONS
    {
        // Flags count from a default of 0: only what the user typed counts.
        if matches.value_source(long) != Some(clap::parser::ValueSource::CommandLine) {
            continue;
        }
        let Some(indices) = matches.indices_of(long) else {
            continue;
        };
        if takes_value {
            let values = matches
                .get_raw(long)
                .into_iter()
                .flatten()
                .map(|v| v.to_string_lossy().into_owned());
            for (index, value) in indices.zip(values) {
                found.push((
                    index,
                    Occurrence {
                        opt,
                        value: Some(value),
                    },
                ));
            }
        } else {
            for index in indices {
                found.push((index, Occurrence { opt, value: None }));
            }
        }
    }
    found.sort_by_key(|(i, _)| *i);
    let positionals = matches
        .get_raw("dbname")
        .into_iter()
        .flatten()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    Ok(Tokens {
        options: found.into_iter().map(|(_, o)| o).collect(),
        positionals,
    })
}

/// The long options whose names start with `prefix`, in pgbench's table order: those of
/// pgbench 15 where any of them does, so that getopt's answer (the option, or the list of
/// possibilities) is stock's for every prefix stock knows.
fn long_candidates(prefix: &str) -> Vec<&'static str> {
    let matching = |rows: &[OptionSpec]| -> Vec<&'static str> {
        rows.iter()
            .map(|o| o.long)
            .filter(|l| l.starts_with(prefix))
            .collect()
    };
    let stock = matching(&OPTIONS[..PGBENCH_15_OPTIONS]);
    if stock.is_empty() {
        matching(OPTIONS)
    } else {
        stock
    }
}

/// `args` with every long-option prefix that names one pgbench 15 option spelled out, so
/// that clap's own prefix inference (over all options) cannot call it ambiguous. Values
/// are left alone: the word after an option that takes one, and everything after `--`.
fn with_stock_prefixes(args: &[String]) -> Vec<String> {
    let mut out = Vec::with_capacity(args.len());
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "--" {
            out.push(word.clone());
            out.extend(words.by_ref().cloned());
            break;
        }
        let takes_value = if let Some(long) = word.strip_prefix("--") {
            let (name, value) = match long.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (long, None),
            };
            let exact = OPTIONS.iter().find(|o| o.long == name);
            let row = exact.or_else(|| match long_candidates(name)[..] {
                [only] => OPTIONS.iter().find(|o| o.long == only),
                _ => None,
            });
            match row {
                Some(row) if !name.is_empty() => {
                    out.push(match value {
                        Some(value) => format!("--{}={value}", row.long),
                        None => format!("--{}", row.long),
                    });
                    row.takes_value && value.is_none()
                }
                _ => {
                    out.push(word.clone());
                    false
                }
            }
        } else {
            out.push(word.clone());
            short_bundle_wants_next_word(word)
        };
        if takes_value {
            if let Some(value) = words.next() {
                out.push(value.clone());
            }
        }
    }
    out
}

/// Whether `word`, a bundle of short options (`-nc`), ends in one whose value is the next
/// word (getopt: the rest of the bundle is the value when there is a rest).
fn short_bundle_wants_next_word(word: &str) -> bool {
    let Some(letters) = word.strip_prefix('-') else {
        return false;
    };
    let mut chars = letters.chars();
    while let Some(c) = chars.next() {
        match OPTIONS.iter().find(|o| o.short == Some(c)) {
            Some(row) if row.takes_value => return chars.as_str().is_empty(),
            Some(_) => {}
            None => return false,
        }
    }
    false
}

/// Rewords clap's error as glibc getopt would have said it.
fn getopt_message(argv0: &str, args: &[String], err: &clap::Error) -> String {
    let invalid = match err.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(s)) => s.clone(),
        _ => String::new(),
    };
    // The word as the user typed it, for long options with `=value`.
    let typed = |name: &str| -> String {
        args.iter()
            .find(|a| a.starts_with(name))
            .cloned()
            .unwrap_or_else(|| name.to_string())
    };
    match err.kind() {
        ErrorKind::UnknownArgument => {
            if let Some(long) = invalid.strip_prefix("--") {
                let word = typed(&invalid);
                let name = long.split('=').next().unwrap_or(long);
                let candidates = long_candidates(name);
                if candidates.len() > 1 {
                    let list: Vec<String> = candidates.iter().map(|c| format!("'--{c}'")).collect();
                    return format!(
                        "{argv0}: option '{word}' is ambiguous; possibilities: {}",
                        list.join(" ")
                    );
                }
                format!("{argv0}: unrecognized option '{}'", word)
            } else if let Some(short) = invalid.strip_prefix('-') {
                let c = short.chars().next().unwrap_or('?');
                format!("{argv0}: invalid option -- '{c}'")
            } else {
                format!("{argv0}: invalid option -- '{invalid}'")
            }
        }
        ErrorKind::InvalidValue | ErrorKind::WrongNumberOfValues | ErrorKind::NoEquals => {
            // Only reachable for an option given without its value.
            let name = invalid.split_whitespace().next().unwrap_or("");
            option_requires_argument(argv0, args, name)
        }
        ErrorKind::TooManyValues => {
            // A flag given `=value`.
            let name = invalid.split_whitespace().next().unwrap_or("");
            let long = OPTIONS
                .iter()
                .find(|o| name.contains(&format!("--{}", o.long)))
                .map(|o| o.long)
                .unwrap_or("");
            format!("{argv0}: option '--{long}' doesn't allow an argument")
        }
        _ => format!("{argv0}: {}", err.kind()),
    }
}

fn option_requires_argument(argv0: &str, args: &[String], clap_name: &str) -> String {
    // clap names the argument `--client <client>` or `-c <client>`; find what was typed.
    let last = args.last().map(String::as_str).unwrap_or("");
    if let Some(long) = last.strip_prefix("--") {
        let full = long_candidates(long).first().copied().unwrap_or(long);
        return format!("{argv0}: option '--{full}' requires an argument");
    }
    if let Some(short) = last.strip_prefix('-') {
        if let Some(c) = short.chars().last() {
            return format!("{argv0}: option requires an argument -- '{c}'");
        }
    }
    format!("{argv0}: option '{clap_name}' requires an argument")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tok(args: &[&str]) -> Result<Tokens, GetoptError> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        tokenize("/bin/pgbench", &args)
    }

    fn opts(args: &[&str]) -> Vec<(Opt, Option<String>)> {
        tok(args)
            .unwrap()
            .options
            .into_iter()
            .map(|o| (o.opt, o.value))
            .collect()
    }

    #[test]
    fn options_come_back_in_command_line_order() {
        assert_eq!(
            opts(&["-f", "a.sql", "-c5", "--file=b.sql", "-nS", "--cli=7"]),
            vec![
                (Opt::File, Some("a.sql".into())),
                (Opt::Client, Some("5".into())),
                (Opt::File, Some("b.sql".into())),
                (Opt::NoVacuum, None),
                (Opt::SelectOnly, None),
                (Opt::Client, Some("7".into())),
            ]
        );
    }

    #[test]
    fn every_repetition_of_a_flag_counts() {
        assert_eq!(
            opts(&["-S", "-c", "2", "-S", "-nS"]),
            vec![
                (Opt::SelectOnly, None),
                (Opt::Client, Some("2".into())),
                (Opt::SelectOnly, None),
                (Opt::NoVacuum, None),
                (Opt::SelectOnly, None),
            ]
        );
    }

    #[test]
    fn positionals_may_be_interleaved_and_values_may_start_with_a_dash() {
        let t = tok(&["db", "-c", "-5", "-T", "10"]).unwrap();
        assert_eq!(t.positionals, vec!["db".to_string()]);
        assert_eq!(t.options[0].value.as_deref(), Some("-5"));
    }

    #[test]
    fn getopt_complaints_are_reproduced() {
        let cases: &[(&[&str], &str)] = &[
            (&["--nope"], "/bin/pgbench: unrecognized option '--nope'"),
            (&["-x"], "/bin/pgbench: invalid option -- 'x'"),
            (&["-c"], "/bin/pgbench: option requires an argument -- 'c'"),
            (
                &["--client"],
                "/bin/pgbench: option '--client' requires an argument",
            ),
            (
                &["--connect=3"],
                "/bin/pgbench: option '--connect' doesn't allow an argument",
            ),
            (
                &["--s=1"],
                "/bin/pgbench: option '--s=1' is ambiguous; possibilities: '--scale' \
                 '--select-only' '--skip-some-updates' '--sampling-rate' '--show-script'",
            ),
        ];
        for (args, want) in cases {
            assert_eq!(tok(args).unwrap_err().0, *want, "for {args:?}");
        }
    }

    #[test]
    fn a_prefix_of_one_pgbench_15_option_means_it_whatever_came_later() {
        assert_eq!(OPTIONS[PGBENCH_15_OPTIONS - 1].opt, Opt::VerboseErrors);
        assert_eq!(OPTIONS[PGBENCH_15_OPTIONS].opt, Opt::ExitOnAbort);
        // Stock pgbench 15 reads these as --select-only and --max-tries; later options
        // (--server-stats, --metrics-listen, --metrics-linger) must not make them ambiguous.
        assert_eq!(opts(&["--se"]), vec![(Opt::SelectOnly, None)]);
        assert_eq!(opts(&["--m=3"]), vec![(Opt::MaxTries, Some("3".into()))]);
        assert_eq!(opts(&["--m", "3"]), vec![(Opt::MaxTries, Some("3".into()))]);
        // Prefixes stock does not know go on meaning what they name among all options.
        assert_eq!(opts(&["--ser"]), vec![(Opt::ServerStats, None)]);
        assert_eq!(opts(&["--warm=5"]), vec![(Opt::Warmup, Some("5".into()))]);
        assert_eq!(
            tok(&["--metrics-l=1"]).unwrap_err().0,
            "/bin/pgbench: option '--metrics-l=1' is ambiguous; possibilities: \
             '--metrics-listen' '--metrics-linger'"
        );
        // An option's value and what follows `--` are words, not options.
        assert_eq!(
            opts(&["-D", "--se"]),
            vec![(Opt::Define, Some("--se".into()))]
        );
        assert_eq!(
            opts(&["-nD", "--se"]),
            vec![(Opt::NoVacuum, None), (Opt::Define, Some("--se".into()))]
        );
        let t = tok(&["--", "--se"]).unwrap();
        assert!(t.options.is_empty());
        assert_eq!(t.positionals, vec!["--se".to_string()]);
    }

    #[test]
    fn latency_percentiles_takes_an_optional_list() {
        assert_eq!(
            opts(&["--latency-percentiles"]),
            vec![(Opt::LatencyPercentiles, Some(String::new()))]
        );
        assert_eq!(
            opts(&["--latency-percentiles=50,99"]),
            vec![(Opt::LatencyPercentiles, Some("50,99".into()))]
        );
    }
}
