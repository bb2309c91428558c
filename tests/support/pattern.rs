//! The Perl regular expressions that pgbench's own TAP tests check its output with,
//! kept as written: `fancy-regex` has what they use beyond the `regex` crate
//! (back-references, look-ahead). One Perl meaning it does not share is adapted here:
//! without `(?m)`, Perl's `$` matches at the end of the text *or just before a final
//! newline* (so `qr{^$}` accepts a lone "\n"), while fancy-regex's `$` is the end only.
//! [`perl_dollar`] rewrites such a `$` to `(?=\n?\z)`.

use fancy_regex::Regex;
use std::fmt;

/// A compiled Perl pattern.
pub struct Pattern {
    source: String,
    regex: Regex,
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "qr{{{}}}", self.source)
    }
}

impl Pattern {
    /// Compiles a Perl pattern (panics on a malformed one: patterns are test code).
    pub fn new(source: &str) -> Pattern {
        let regex = Regex::new(&perl_dollar(source))
            .unwrap_or_else(|e| panic!("qr{{{source}}} does not compile: {e}"));
        Pattern {
            source: source.to_string(),
            regex,
        }
    }

    /// Whether the pattern matches somewhere in `text`.
    pub fn is_match(&self, text: &str) -> bool {
        self.regex
            .is_match(text)
            .unwrap_or_else(|e| panic!("{self:?} on {text:?}: {e}"))
    }
}

/// The leading flag groups of a pattern (`(?i)`, `(?s)`, `(?m)`, `(?sm)`...): their
/// letters, and the rest of the pattern.
fn leading_flags(source: &str) -> (String, &str) {
    let mut flags = String::new();
    let mut rest = source;
    while let Some(group) = rest.strip_prefix("(?") {
        let Some(end) = group.find(')') else { break };
        if end == 0 || !group[..end].chars().all(|c| "ims".contains(c)) {
            break;
        }
        flags.push_str(&group[..end]);
        rest = &group[end + 1..];
    }
    (flags, rest)
}

/// `source` with each `$` anchor given Perl's meaning (see the module header). Under a
/// leading `(?m)` both agree (before any newline, or at the end) and nothing changes;
/// a `(?m)` further in is refused rather than half-handled.
fn perl_dollar(source: &str) -> String {
    let (flags, rest) = leading_flags(source);
    if flags.contains('m') {
        return source.to_string();
    }
    let mut out = source[..source.len() - rest.len()].to_string();
    let mut chars = rest.chars().peekable();
    let mut in_class = false;
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                out.push(c);
                out.extend(chars.next());
            }
            '[' if !in_class => {
                in_class = true;
                out.push(c);
                // A `]` first in the class (after an optional `^`) is a literal.
                if chars.peek() == Some(&'^') {
                    out.extend(chars.next());
                }
                if chars.peek() == Some(&']') {
                    out.extend(chars.next());
                }
            }
            ']' if in_class => {
                in_class = false;
                out.push(c);
            }
            '(' if !in_class && chars.peek() == Some(&'?') => {
                let tail: String = chars
                    .clone()
                    .skip(1)
                    .take_while(|c| c.is_alphabetic())
                    .collect();
                assert!(
                    !tail.contains('m'),
                    "qr{{{source}}}: (?m) is supported only at the start"
                );
                out.push(c);
            }
            '$' if !in_class => out.push_str(r"(?=\n?\z)"),
            _ => out.push(c),
        }
    }
    out
}

/// Asserts that every pattern matches `text` (as Test::More's `like`), naming `what`.
pub fn assert_like(text: &str, patterns: &[&str], what: &str) {
    for p in patterns {
        assert!(
            Pattern::new(p).is_match(text),
            "{what}: qr{{{p}}} does not match:\n{text}"
        );
    }
}

/// Asserts that no pattern matches `text` (as Test::More's `unlike`).
pub fn assert_unlike(text: &str, patterns: &[&str], what: &str) {
    for p in patterns {
        assert!(
            !Pattern::new(p).is_match(text),
            "{what}: qr{{{p}}} unexpectedly matches:\n{text}"
        );
    }
}

/// The pattern matcher the cases rely on must also say no.
#[test]
fn patterns_reject_what_they_should() {
    let cases: &[(&str, &str, bool)] = &[
        ("^$", "", true),
        ("^$", "\n", true),
        ("^$", "x", false),
        ("(?i)^$", "\n\n", false),
        (r"processed: (\d+)/\1", "processed: 12/12", true),
        (r"processed: (\d+)/\1\b", "processed: 12/123", false),
        (r"^[01] \d{1,2} \d+$", "1 123 4", false),
        (r"^[01] \d{1,2} \d+$", "1 12 4\n", true),
        ("(?i)missing ARGUMENT", "Missing argument", true),
        ("(a|b)c.*x", "zzbcQQx", true),
        ("(?s)a.*b", "a\nb", true),
        ("a.*b", "a\nb", false),
        ("(?m)^b$", "a\nb\nc", true),
        (r"int 17\b", "int 170", false),
        ("x(?!y)", "xy xz", true),
        ("x(?!y)", "xy", false),
        // What the `$` rewrite must leave alone.
        (r"a\$", "a$", true),
        (r"a\$", "a", false),
        ("a[$]", "a$", true),
        ("a[]$]", "a$", true),
        ("(?m)a$", "a\n\n", true),
        ("(?s)a$", "a\n\n", false),
    ];
    for (p, text, want) in cases {
        assert_eq!(
            Pattern::new(p).is_match(text),
            *want,
            "qr{{{p}}} on {text:?}"
        );
    }
}
