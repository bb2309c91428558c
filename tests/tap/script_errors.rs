//! The table of scripts that fail to load (status 1) or abort their client (status 2).

use super::{bench_db, Case};

/// A script that fails, run once with pgbench's error-case options: status 1 means it
/// failed to load (nothing on stdout), 2 that its client aborted (`processed: 0/1`).
fn script_error(name: &str, status: i32, stderr: &[&str], script: impl AsRef<str>) {
    assert_ne!(status, 0, "invalid expected status for test \"{name}\"");
    let file = format!("001_pgbench_error_{name}");
    Case {
        name: &format!("pgbench script error: {name}"),
        opts: "-n -t 1 -Dfoo=bla -Dnull=null -Dtrue=true -Done=1 -Dzero=0.0 \
               -Dbadtrue=trueXXX -Dmaxint=9223372036854775807 \
               -Dminint=-9223372036854775808 -M prepared",
        status,
        stdout: &[if status == 1 { "^$" } else { "processed: 0/1" }],
        stderr,
        files: &[(&file, script.as_ref())],
        ..Case::default()
    }
    .check(bench_db());
}

macro_rules! script_errors {
    ($($name:ident: $status:expr, [$($re:expr),* $(,)?], $script:expr;)*) => {
        $(
            #[test]
            fn $name() {
                script_error(
                    stringify!($name),
                    $status,
                    &[$($re),*],
                    $script,
                );
            }
        )*
    };
}

fn too_many_sql_args() -> String {
    format!(
        "-- MAX_ARGS=256 for prepared\n\\set i 0\nSELECT LEAST({})",
        vec![":i"; 256].join(", ")
    )
}

fn too_many_shell_args() -> String {
    format!(
        "-- 256 arguments to \\shell\n\\shell echo {}",
        vec!["arg"; 255].join(" ")
    )
}

script_errors! {
    // SQL
    sql_syntax_error: 2,
        [r"ERROR:  syntax error", r"prepared statement .* does not exist"],
        "-- SQL syntax error\n    SELECT 1 + ;\n";
    sql_too_many_args: 1, [r"statement has too many arguments.*\b255\b"], too_many_sql_args();
    // SHELL
    shell_bad_command: 2, [r"\(shell\) .* meta-command failed"], r"\shell no-such-command";
    shell_undefined_variable: 2, [r#"undefined variable ":nosuchvariable""#],
        "-- undefined variable in shell\n\\shell echo ::foo :nosuchvariable\n";
    shell_missing_command: 1, [r"missing command "], r"\shell";
    shell_too_many_args: 1, [r#"too many arguments in command "shell""#],
        too_many_shell_args();
    // SET
    set_syntax_error: 1, [r#"syntax error in command "set""#], r"\set i 1 +";
    set_no_such_function: 1, [r"unexpected function name"], r"\set i noSuchFunction()";
    set_invalid_variable_name: 2, [r"invalid variable name"], r"\set . 1";
    set_division_by_zero: 2, [r"division by zero"], r"\set i 1/0";
    set_undefined_variable: 2, [r#"undefined variable "nosuchvariable""#],
        r"\set i :nosuchvariable";
    set_unexpected_char: 1, [r"unexpected character .;."], r"\set i ;";
    set_too_many_args: 2, [r"too many function arguments"],
        r"\set i least(0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16)";
    set_empty_random_range: 2, [r"empty range given to random"], r"\set i random(5,3)";
    set_random_range_too_large: 2, [r"random range is too large"],
        r"\set i random(:minint, :maxint)";
    set_gaussian_param_too_small: 2, [r"gaussian param.* at least 2"],
        r"\set i random_gaussian(0, 10, 1.0)";
    set_exponential_param_greater_0: 2, [r"exponential parameter must be greater "],
        r"\set i random_exponential(0, 10, 0.0)";
    set_zipfian_param_to_1: 2, [r"zipfian parameter must be in range \[1\.001, 1000\]"],
        r"\set i random_zipfian(0, 10, 1)";
    set_zipfian_param_too_large: 2,
        [r"zipfian parameter must be in range \[1\.001, 1000\]"],
        r"\set i random_zipfian(0, 10, 1000000)";
    set_non_numeric_value: 2, [r#"malformed variable "foo" value: "bla""#],
        r"\set i :foo + 1";
    set_no_expression: 1, [r"syntax error"], r"\set i";
    set_missing_argument: 1, [r"(?i)missing argument"], r"\set";
    set_not_a_bool: 2, [r"cannot coerce double to boolean"], r"\set b NOT 0.0";
    set_not_an_int: 2, [r"cannot coerce boolean to int"], r"\set i TRUE + 2";
    set_not_a_double: 2, [r"cannot coerce boolean to double"], r"\set d ln(TRUE)";
    set_case_error: 1, [r#"syntax error in command "set""#],
        r"\set i CASE TRUE THEN 1 ELSE 0 END";
    set_random_error: 2, [r"cannot coerce boolean to int"], r"\set b random(FALSE, TRUE)";
    set_number_of_args_mismatch: 1, [r"unexpected number of arguments"],
        r"\set d ln(1.0, 2.0))";
    set_at_least_one_arg: 1, [r"at least one argument expected"], r"\set i greatest())";
    // SET: arithmetic overflow detection
    set_double_to_int_overflow: 2, [r"double to int overflow for 100"], r"\set i int(1E32)";
    set_bigint_add_overflow: 2, [r"int add out"], r"\set i (1<<62) + (1<<62)";
    set_bigint_sub_overflow: 2, [r"int sub out"], r"\set i 0 - (1<<62) - (1<<62) - (1<<62)";
    set_bigint_mul_overflow: 2, [r"int mul out"], r"\set i 2 * (1<<62)";
    set_bigint_div_out_of_range: 2, [r"bigint div out of range"], r"\set i :minint / -1";
    // SETSHELL
    setshell_not_an_int: 2, [r"command must return an integer"], r"\setshell i echo -n one";
    setshell_missing_arg: 1, [r"missing argument "], r"\setshell var";
    setshell_no_such_command: 2, [r"could not read result "],
        r"\setshell var no-such-command";
    // SLEEP
    sleep_undefined_variable: 2, [r"sleep: undefined variable"], r"\sleep :nosuchvariable";
    sleep_too_many_args: 1, [r"too many arguments"], r"\sleep too many args";
    sleep_missing_arg: 1, [r"missing argument", r"\\sleep"], r"\sleep";
    sleep_unknown_unit: 1, [r"unrecognized time unit"], r"\sleep 1 week";
    // MISC
    misc_invalid_backslash_command: 1, [r#"invalid command .* "nosuchcommand""#],
        r"\nosuchcommand";
    misc_empty_script: 1, [r"empty command list for script"], "";
    bad_boolean: 2, [r"malformed variable.*trueXXX"], r"\set b :badtrue or true";
    invalid_permute_size: 2, [r"permute size parameter must be greater than zero"],
        r"\set i permute(0, 0)";
    // GSET
    gset_no_row: 2, [r"expected one row, got 0\b"], r"SELECT WHERE FALSE \gset";
    gset_alone: 1, [r"gset must follow an SQL command"], r"\gset";
    gset_no_sql: 1, [r"gset must follow an SQL command"], "\\set i +1\n\\gset";
    gset_too_many_arguments: 1, [r"too many arguments"], r"SELECT 1 \gset a b";
    gset_after_gset: 1, [r"gset must follow an SQL command"], "SELECT 1 AS i \\gset\n\\gset";
    gset_non_select: 2, [r"expected one row, got 0"],
        r"DROP TABLE IF EXISTS no_such_table \gset";
    gset_bad_default_name: 2, [r"error storing into variable \?column\?"],
        r"SELECT 1 \gset";
    gset_bad_name: 2, [r"error storing into variable bad name!"],
        r#"SELECT 1 AS "bad name!" \gset"#;
}
