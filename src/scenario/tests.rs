use super::*;

const FILE: &str = "mix.toml";

fn err(text: &str) -> String {
    parse(FILE, text).unwrap_err().to_string()
}

#[test]
fn a_read_and_a_write_scenario() {
    let text = r#"
[[scenario]]
name = "reads"
script = "select-only"
clients = 2
conninfo = "host=/tmp port=5651,5652 target_session_attrs=standby"

[[scenario]]
name = "writes"
script = ["insert.sql", "tpcb-like"]
weight = [3, 1]
clients = 4
threads = 2
rate = 50
"#;
    let s = parse(FILE, text).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].name, "reads");
    assert_eq!(s[0].line, 2);
    assert_eq!(
        s[0].scripts,
        [ScriptSpec {
            source: "select-only".into(),
            weight: 1
        }]
    );
    assert_eq!(s[0].threads, None);
    assert_eq!(s[0].rate, None);
    assert!(s[0].conninfo.as_deref().unwrap().contains("standby"));
    assert_eq!(s[1].line, 8);
    assert_eq!(s[1].scripts[0].weight, 3);
    assert_eq!(s[1].scripts[1].source, "tpcb-like");
    assert_eq!(
        (s[1].clients, s[1].threads, s[1].rate),
        (Some(4), Some(2), Some(50.0))
    );
    // A float rate too.
    let s = parse(
        FILE,
        "[[scenario]]\nname='a'\nscript='x'\nclients=1\nrate=2.5\n",
    )
    .unwrap();
    assert_eq!(s[0].rate, Some(2.5));
}

#[test]
fn an_unknown_key_names_the_file_the_line_and_the_key() {
    let text =
        "[[scenario]]\nname = \"reads\"\nscript = \"select-only\"\nclients = 2\nclinets = 3\n";
    assert_eq!(
        err(text),
        "mix.toml:5: unknown key \"clinets\" in scenario \"reads\" (known keys: name, script, \
         weight, clients, threads, rate, rate_stages, client_stages, conninfo)"
    );
    assert_eq!(
        err("scenarios = 1\n"),
        "mix.toml:1: unknown key \"scenarios\" (known keys: scenario)"
    );
}

#[test]
fn a_bad_value_names_the_file_the_line_and_the_key() {
    let head = "[[scenario]]\nname = \"w\"\nscript = \"x.sql\"\n";
    assert_eq!(
        err(&format!("{head}clients = \"two\"\n")),
        "mix.toml:4: key \"clients\": expected a positive integer, got \"two\""
    );
    assert_eq!(
        err(&format!("{head}clients = 0\n")),
        "mix.toml:4: key \"clients\": expected a positive integer, got 0"
    );
    assert_eq!(
        err(&format!("{head}clients = 2\nrate = -5\n")),
        "mix.toml:5: key \"rate\": expected a positive number of transactions per second, got -5"
    );
    assert_eq!(
        err(&format!("{head}clients = 2\nthreads = 3\n")),
        "mix.toml:5: key \"threads\": 3 threads for 2 clients: at most one per client"
    );
    assert_eq!(
        err(&format!("{head}clients = 1\nweight = [1, 2]\n")),
        "mix.toml:5: key \"weight\": 2 weights for 1 scripts: give one per script"
    );
    assert_eq!(
        err(&format!("{head}clients = 1\nconninfo = 5432\n")),
        "mix.toml:5: key \"conninfo\": expected a string, got 5432"
    );
    assert_eq!(
        err("[[scenario]]\nname = \"\"\n"),
        "mix.toml:2: key \"name\": must not be empty"
    );
}

#[test]
fn missing_keys_names_and_syntax() {
    assert_eq!(
        err("\n[[scenario]]\nname = \"w\"\nclients = 1\n"),
        "mix.toml:2: scenario 1 has no \"script\""
    );
    assert_eq!(err("# nothing\n"), "mix.toml: no [[scenario]] table");
    let twice = "[[scenario]]\nname='a'\nscript='x'\nclients=1\n\
                 [[scenario]]\nname='a'\nscript='y'\nclients=1\n";
    assert_eq!(
        err(twice),
        "mix.toml:6: key \"name\": scenario \"a\" is named twice (line 1 too)"
    );
    let e = err("[[scenario]]\nname = \"w\nclients = 1\n");
    assert!(e.starts_with("mix.toml:2: invalid TOML: "), "{e}");
}
