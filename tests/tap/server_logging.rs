//! The server's logging of query parameters, with errors and with statements.

use super::Case;
use crate::support::fresh_db;
use crate::support::pattern::{assert_like, assert_unlike};

/// Server logging of query parameters, set per database here (upstream edits
/// postgresql.conf, which would reach every other test's database too); the server
/// log is checked from the start of this test on.
#[test]
fn server_parameter_logging() {
    let db = fresh_db("tap_param_logging");
    let set = |settings: &[(&str, &str)]| {
        for (k, v) in settings {
            db.psql(&format!("ALTER DATABASE {} SET {k} = {v}", db.name));
        }
    };
    let log_start = db.cluster.server_log().len();
    assert!(
        log_start > 0,
        "this test reads the server log of a cluster of its own"
    );
    let log = || db.cluster.server_log()[log_start..].to_string();
    let json_script = "select '{ invalid ' as value \\gset\n\
        select $$'Valame Dios!' dijo Sancho; 'no le dije yo a vuestra merced que mirase bien lo que hacia?'$$ as long \\gset\n\
        select column1::jsonb from (values (:value), (:long)) as q;\n";
    let division_script = "select '1' as one \\gset\n\
        SELECT 1 / (random() / 2)::int, :one::int, :two::int;\n";
    let opts = "-n -t1 -c1 -M prepared";

    // Logging neither with errors nor with statements.
    set(&[
        ("log_min_duration_statement", "0"),
        ("log_parameter_max_length", "0"),
        ("log_parameter_max_length_on_error", "0"),
    ]);
    let out = Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &["ERROR:  invalid input syntax for type json"],
        files: &[("001_param_1", json_script)],
        ..Case::default()
    }
    .check(&db);
    assert_unlike(
        &out.stderr,
        &["unnamed portal with parameters"],
        "no parameters in the error",
    );
    assert_unlike(
        &log(),
        &[r"DETAIL:  parameters: \$1 = '\{ invalid ',"],
        "no parameters logged",
    );

    // Truncated parameters on error, full ones with statements.
    set(&[
        ("log_parameter_max_length", "-1"),
        ("log_parameter_max_length_on_error", "64"),
    ]);
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            "ERROR:  division by zero",
            r"CONTEXT:  unnamed portal with parameters: \$1 = '1', \$2 = NULL",
        ],
        files: &[("001_param_2", division_script)],
        ..Case::default()
    }
    .check(&db);
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            "ERROR:  invalid input syntax for type json",
            r"(?m)CONTEXT:  JSON data, line 1: \{ invalid\.\.\.[\r\n]+unnamed portal with parameters: \$1 = '\{ invalid ', \$2 = '''Valame Dios!'' dijo Sancho; ''no le dije yo a vuestra merced que \.\.\.'",
        ],
        files: &[("001_param_3", json_script)],
        ..Case::default()
    }
    .check(&db);
    assert_like(
        &log(),
        &[
            r"DETAIL:  parameters: \$1 = '\{ invalid ', \$2 = '''Valame Dios!'' dijo Sancho; ''no le dije yo a vuestra merced que mirase bien lo que hacia\?'''",
        ],
        "parameter report does not truncate",
    );

    // Full parameters on error, truncated ones with statements.
    set(&[
        ("log_min_duration_statement", "-1"),
        ("log_parameter_max_length", "7"),
        ("log_parameter_max_length_on_error", "-1"),
    ]);
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            "ERROR:  division by zero",
            r"CONTEXT:  unnamed portal with parameters: \$1 = '1', \$2 = NULL",
        ],
        files: &[("001_param_4", division_script)],
        ..Case::default()
    }
    .check(&db);
    set(&[("log_min_duration_statement", "0")]);
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            "ERROR:  invalid input syntax for type json",
            r"(?m)CONTEXT:  JSON data, line 1: \{ invalid\.\.\.[\r\n]+unnamed portal with parameters: \$1 = '\{ invalid ', \$2 = '''Valame Dios!'' dijo Sancho; ''no le dije yo a vuestra merced que mirase bien lo que hacia\?'",
        ],
        files: &[("001_param_5", json_script)],
        ..Case::default()
    }
    .check(&db);
    assert_like(
        &log(),
        &[r"DETAIL:  parameters: \$1 = '\{ inval\.\.\.', \$2 = '''Valame\.\.\.'"],
        "parameter report truncates",
    );

    // Bad parameters are reported in the typinput phase of Bind.
    Case {
        name: "server parameter logging",
        opts,
        status: 2,
        stderr: &[
            r#"ERROR:  invalid input syntax for type smallint: "1a""#,
            r"CONTEXT:  unnamed portal parameter \$2 = '1a'",
        ],
        files: &[(
            "001_param_6",
            "select 42 as value1, '1a' as value2 \\gset\n\
             select :value1::smallint, :value2::smallint;\n",
        )],
        ..Case::default()
    }
    .check(&db);
}
