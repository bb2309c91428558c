//! A client's variable table: strings from `-D`/`\gset`/`\aset` converted lazily,
//! values from `\set`, the string forms substituted into SQL, name checks, clones.

use pgbench_script::ast::Value;
use pgbench_script::eval::EvalError;
use pgbench_script::variables::{is_valid_name, parse_variable_value, Variables};

fn text(vars: &Variables, name: &str) -> Option<String> {
    let mut s = String::from("<");
    vars.write_text(name, &mut s).then(|| s[1..].to_string())
}

#[test]
fn a_string_keeps_its_spelling_for_sql_and_converts_once_for_expressions() {
    let mut vars = Variables::new();
    vars.set_text("option", "x", "007").unwrap();
    assert_eq!(vars.get("x").unwrap().typed_value(), None);
    assert_eq!(vars.value("x"), Ok(Value::Int(7)));
    assert_eq!(vars.get("x").unwrap().typed_value(), Some(Value::Int(7)));
    assert_eq!(vars.get("x").unwrap().text(), Some("007"));
    assert_eq!(text(&vars, "x").as_deref(), Some("007"));
}

#[test]
fn a_value_is_substituted_in_its_string_form() {
    let mut vars = Variables::new();
    for (v, s) in [
        (Value::Int(-42), "-42"),
        (Value::Double(1e15), "1e+15"),
        (Value::Double(0.1 + 0.2), "0.3"),
        (Value::Double(f64::NEG_INFINITY), "-Infinity"),
        (Value::Bool(true), "true"),
        (Value::Null, "NULL"),
    ] {
        vars.set_value("set", "v", v).unwrap();
        assert_eq!(text(&vars, "v").as_deref(), Some(s));
        assert_eq!(vars.get("v").unwrap().text(), None);
        assert_eq!(vars.value("v"), Ok(v));
    }
    // A later string replaces the value, and converts again.
    vars.set_text("gset", "v", "2.5").unwrap();
    assert_eq!(vars.value("v"), Ok(Value::Double(2.5)));
    assert_eq!(text(&vars, "nope"), None);
}

#[test]
fn undefined_and_empty_variables() {
    let mut vars = Variables::new();
    assert_eq!(
        vars.value("nope"),
        Err(EvalError::UndefinedVariable("nope".into()))
    );
    // \gset stores an SQL NULL column as the empty string, which pgbench cannot read.
    vars.set_text("gset", "e", "").unwrap();
    let err = vars.value("e").unwrap_err();
    assert!(err.is_silent());
    assert_eq!(text(&vars, "e").as_deref(), Some(""));
}

#[test]
fn names_are_checked_when_a_variable_is_created() {
    let mut vars = Variables::new();
    assert_eq!(
        vars.set_text("option", "1x", "1"),
        Err(EvalError::InvalidVariableName {
            context: "option".into(),
            name: "1x".into()
        })
    );
    assert_eq!(
        vars.set_int("setshell", "a-b", 1).unwrap_err().to_string(),
        "setshell: invalid variable name: \"a-b\""
    );
    assert!(vars.is_empty());
    vars.set_value("set", "_ok9", Value::Int(1)).unwrap();
    vars.set_value("set", "ünïcode", Value::Int(2)).unwrap();
    assert_eq!(vars.len(), 2);
    assert!(is_valid_name("Z"));
    assert!(!is_valid_name("9"));
}

#[test]
fn conversion_rules_and_messages() {
    let conv = |s: &str| parse_variable_value("v", s);
    assert_eq!(conv("NULL"), Ok(Value::Null));
    assert_eq!(conv("Ye"), Ok(Value::Bool(true)));
    assert_eq!(conv("ON"), Ok(Value::Bool(true)));
    assert_eq!(conv("of"), Ok(Value::Bool(false)));
    assert_eq!(conv("0"), Ok(Value::Int(0)));
    assert_eq!(conv("\t-12"), Ok(Value::Int(-12)));
    assert_eq!(conv("1.0"), Ok(Value::Double(1.0)));
    assert_eq!(
        conv("o").unwrap_err().to_string(),
        "malformed variable \"v\" value: \"o\""
    );
    assert_eq!(
        conv("-9223372036854775809").unwrap_err().to_string(),
        "value \"-9223372036854775809\" is out of range for type bigint"
    );
    assert_eq!(
        conv("+").unwrap_err().to_string(),
        "invalid input syntax for type bigint: \"+\""
    );
    assert_eq!(
        conv("1e-320").unwrap_err().to_string(),
        "malformed variable \"v\" value: \"1e-320\""
    );
}

#[test]
fn clones_are_independent_and_keep_indexes() {
    let mut client0 = Variables::new();
    client0.set_text("option", "a", "1").unwrap();
    client0.set_int("startup", "scale", 10).unwrap();
    let mut client1 = client0.clone();
    client1.set_int("startup", "client_id", 1).unwrap();
    client1.set_value("set", "a", Value::Double(0.5)).unwrap();
    assert_eq!(client0.get("client_id"), None);
    assert_eq!(text(&client0, "a").as_deref(), Some("1"));
    assert_eq!(client1.index_of("scale"), client0.index_of("scale"));
    let i = client1.index_of("a").unwrap();
    assert_eq!(client1.get_index(i).unwrap().name(), "a");
    let names: Vec<&str> = client1.iter().map(|v| v.name()).collect();
    assert_eq!(names, ["a", "scale", "client_id"]);
}

proptest::proptest! {
    /// Any string converts to a value or to one of pgbench's errors.
    #[test]
    fn conversion_never_panics(s in ".{0,30}") {
        let mut vars = Variables::new();
        vars.set_text("option", "v", &s).unwrap();
        let _ = vars.value("v");
        let mut out = String::new();
        proptest::prop_assert!(vars.write_text("v", &mut out));
        proptest::prop_assert_eq!(out, s);
    }
}
