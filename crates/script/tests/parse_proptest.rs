//! The parser never panics: whatever the text, `parse_script` and `parse_expression`
//! return a script or an error, and what they return is consistent.

use pgbench_script::ast::CommandKind;
use pgbench_script::{parse_expression, parse_script};
use proptest::prelude::*;

/// Text made of the pieces that matter to the lexers: backslashes, quotes, colons,
/// comment and dollar-quote starts, operators, keywords, newlines and non-ASCII.
fn scripty() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("\\".to_string()),
        Just("\\\n".to_string()),
        Just("\\\r\n".to_string()),
        Just("\\set x ".to_string()),
        Just("\\sleep ".to_string()),
        Just("\\gset".to_string()),
        Just("\\if ".to_string()),
        Just("\\endif".to_string()),
        Just("\\;".to_string()),
        Just(";".to_string()),
        Just("'".to_string()),
        Just("E'".to_string()),
        Just("\"".to_string()),
        Just("$$".to_string()),
        Just("$a$".to_string()),
        Just("/*".to_string()),
        Just("*/".to_string()),
        Just("--".to_string()),
        Just(":".to_string()),
        Just("::".to_string()),
        Just(":x".to_string()),
        Just("(".to_string()),
        Just(")".to_string()),
        Just(",".to_string()),
        Just(" ".to_string()),
        Just("\n".to_string()),
        Just("\r".to_string()),
        Just("\t".to_string()),
        Just("\0".to_string()),
        Just("é".to_string()),
        Just("9223372036854775808".to_string()),
        Just("1e999".to_string()),
        Just(".5".to_string()),
        Just("-".to_string()),
        Just("~".to_string()),
        Just("<".to_string()),
        Just(">=".to_string()),
        Just("!=".to_string()),
        Just(" is not null".to_string()),
        Just(" NOT ".to_string()),
        Just(" and ".to_string()),
        Just("case when ".to_string()),
        Just(" then ".to_string()),
        Just(" end".to_string()),
        Just("abs(".to_string()),
        Just("hash(".to_string()),
        Just("CREATE FUNCTION f() BEGIN ".to_string()),
        Just("SELECT ".to_string()),
        "[a-z0-9]{1,4}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..40).prop_map(|v| v.concat())
}

proptest! {
    // XorShift: the default ChaCha generator dominates the run time in debug builds
    #![proptest_config(ProptestConfig {
        cases: 2000,
        rng_algorithm: proptest::test_runner::RngAlgorithm::XorShift,
        ..ProptestConfig::default()
    })]

    #[test]
    fn parse_script_never_panics(text in scripty()) {
        match parse_script("p.sql", "p.sql", &text) {
            Ok(script) => {
                prop_assert!(!script.commands.is_empty());
                for command in &script.commands {
                    prop_assert!(command.line >= 1);
                    if let CommandKind::Sql(sql) = &command.kind {
                        prop_assert!(sql.text.starts_with(&command.first_line));
                        let joined: String = sql
                            .pieces
                            .iter()
                            .map(|p| match p {
                                pgbench_script::ast::SqlPiece::Text(t) => t.clone(),
                                pgbench_script::ast::SqlPiece::Var(v) => format!(":{v}"),
                            })
                            .collect();
                        prop_assert_eq!(&joined, &sql.text);
                    }
                }
            }
            Err(e) => {
                let rendered = e.render("pgbench");
                prop_assert!(rendered.starts_with("pgbench: error: "));
                prop_assert!(rendered.ends_with('\n'));
            }
        }
    }

    #[test]
    fn parse_script_never_panics_on_any_string(text in any::<String>()) {
        let _ = parse_script("p.sql", "p.sql", &text);
    }

    #[test]
    fn parse_expression_never_panics(text in scripty()) {
        let _ = parse_expression(&text);
    }
}
