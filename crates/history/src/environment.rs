//! What a run ran on, beside its figures, so that `diff` can say what changed: the
//! client machine ([`ClientFacts`]) and the server ([`ServerFacts`]: its version, every
//! setting not at its default, its system identifier, the database's size, and the
//! managed service it tells itself apart as). Reading the server never fails: what the
//! role may not read is `None`. The parsing is pure and tested without a server.

use pgbench_results::document::ClientHost;
use pgbench_wire::Connection;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What a run is recorded with.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Environment {
    pub client: Option<ClientFacts>,
    pub server: Option<ServerFacts>,
}

/// The client machine and build.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ClientFacts {
    pub hostname: Option<String>,
    /// Kernel name and release (`Linux 6.1.0-18-amd64`).
    pub os: Option<String>,
    /// `PRETTY_NAME` of /etc/os-release.
    pub distribution: Option<String>,
    /// The kernel's release alone.
    pub kernel: Option<String>,
    pub cpu_model: Option<String>,
    /// CPUs this process may use.
    pub cores: Option<usize>,
    pub memory_bytes: Option<u64>,
    /// The benchmark client's version and build, as its caller names it.
    pub pgbench_rs: Option<String>,
}

/// One setting as the server has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Setting {
    /// As `SHOW` prints it (`7MB`).
    pub value: String,
    /// `pg_settings.setting` and `unit` (`7168`, `kB`).
    pub setting: String,
    pub unit: Option<String>,
    /// Where it was set: `configuration file`, `command line`, `database`, ...
    pub source: String,
}

/// The server.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ServerFacts {
    /// `version()`.
    pub version: Option<String>,
    /// `server_version_num`.
    pub version_num: Option<i64>,
    /// Every setting whose source is not the default (nor `override`).
    pub settings: BTreeMap<String, Setting>,
    /// `pg_control_system()`'s, where the role may call it.
    pub system_identifier: Option<String>,
    /// `pg_database_size(current_database())`, bytes.
    pub database_size: Option<i64>,
    /// The managed service, where it tells itself apart (`Amazon Aurora`, ...).
    pub managed_service: Option<String>,
}

/// Namespaces into one entry point, as the caller sees them:
/// `Environment::client(version)` and `Environment::server(&mut conn)`.
impl Environment {
    /// This machine; `version` is the client's version and build.
    pub fn client(version: &str) -> ClientFacts {
        let read = |p: &str| std::fs::read_to_string(p).ok();
        let host = ClientHost::current();
        ClientFacts {
            kernel: read("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()),
            cpu_model: read("/proc/cpuinfo").and_then(|t| cpu_model(&t)),
            memory_bytes: read("/proc/meminfo").and_then(|t| mem_total(&t)),
            pgbench_rs: Some(version.to_string()).filter(|v| !v.is_empty()),
            ..ClientFacts::from_host(&host)
        }
    }

    /// The server at the other end of `conn`. Each fact is its own query, so one the
    /// role may not read (`pg_control_system()` needs a superuser or
    /// `pg_read_all_settings`-like grants) costs only itself.
    pub fn server(conn: &mut Connection) -> ServerFacts {
        let mut one = |sql: &str| -> Option<Vec<Vec<Option<String>>>> { conn.query_rows(sql).ok() };
        let first = |rows: Option<Vec<Vec<Option<String>>>>| -> Option<String> {
            rows?.into_iter().next()?.into_iter().next()?
        };
        let version = first(one("select version()"));
        let version_num =
            first(one("select current_setting('server_version_num')")).and_then(|v| v.parse().ok());
        let settings = one(
            "select name, setting, unit, source, current_setting(name) from pg_settings \
             where source not in ('default', 'override') order by name",
        )
        .map(|rows| parse_settings(&rows))
        .unwrap_or_default();
        let system_identifier = first(one(
            "select system_identifier::text from pg_control_system()",
        ));
        let database_size =
            first(one("select pg_database_size(current_database())")).and_then(|v| v.parse().ok());
        let aurora = first(one(
            "select exists (select 1 from pg_proc where proname = 'aurora_version')",
        ))
        .as_deref()
            == Some("t");
        let service_settings: Vec<String> =
            one("select name from pg_settings where name like 'alloydb%' \
             or name like 'google_columnar_engine%' or name like 'rds.%' \
             or name like 'cloudsql.%' or name like 'azure.%'")
            .unwrap_or_default()
            .into_iter()
            .filter_map(|r| r.into_iter().next().flatten())
            .collect();
        let rds_role = first(one(
            "select exists (select 1 from pg_roles where rolname = 'rds_superuser')",
        ))
        .as_deref()
            == Some("t");
        ServerFacts {
            version,
            version_num,
            settings,
            system_identifier,
            database_size,
            managed_service: managed_service(aurora, &service_settings, rds_role)
                .map(str::to_string),
        }
    }
}

impl ServerFacts {
    /// The server's version as `server_version` shows it (`15.20 (Debian
    /// 15.20-0+deb12u1)`), read from `version()`'s text (`PostgreSQL 15.20 (Debian
    /// 15.20-0+deb12u1) on x86_64-pc-linux-gnu, compiled by ...`), as results files
    /// record it.
    pub fn short_version(&self) -> Option<String> {
        let rest = self.version.as_deref()?.strip_prefix("PostgreSQL ")?;
        let v = rest.split(" on ").next()?.trim();
        (!v.is_empty()).then(|| v.to_string())
    }
}

impl ClientFacts {
    /// What a results file's `client_host` tells (an imported run's, or a run
    /// recorded after the fact).
    pub fn from_host(h: &ClientHost) -> ClientFacts {
        ClientFacts {
            hostname: h.hostname.clone(),
            os: h.os.clone(),
            distribution: h.distribution.clone(),
            cores: h.cores,
            ..ClientFacts::default()
        }
    }
}

/// The first `model name` of /proc/cpuinfo (x86), else its `Model` or `cpu model`
/// line (ARM boards, MIPS).
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    ["model name", "Model", "cpu model"].iter().find_map(|key| {
        cpuinfo.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            (k.trim() == *key && !v.trim().is_empty()).then(|| v.trim().to_string())
        })
    })
}

/// `MemTotal` of /proc/meminfo, in bytes.
pub fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let mut words = line["MemTotal:".len()..].split_whitespace();
    let n: u64 = words.next()?.parse().ok()?;
    Some(match words.next() {
        Some("kB") | None => n * 1024,
        Some(_) => return None,
    })
}

/// The rows of `select name, setting, unit, source, current_setting(name)`, secrets
/// masked: a setting such as `primary_conninfo` may hold a password.
pub fn parse_settings(rows: &[Vec<Option<String>>]) -> BTreeMap<String, Setting> {
    rows.iter()
        .filter_map(|r| {
            let col = |i: usize| r.get(i).cloned().flatten();
            let name = col(0)?;
            let setting = pgbench_wire::redact_secrets(&col(1).unwrap_or_default());
            let value =
                col(4).map_or_else(|| setting.clone(), |v| pgbench_wire::redact_secrets(&v));
            Some((
                name,
                Setting {
                    value,
                    setting,
                    unit: col(2).filter(|u| !u.is_empty()),
                    source: col(3).unwrap_or_default(),
                },
            ))
        })
        .collect()
}

/// The managed service a server tells itself apart as: Aurora by its
/// `aurora_version()` function (it also has RDS's settings and role, so it is asked
/// first), AlloyDB, Cloud SQL and Azure by their settings' prefixes, RDS by
/// `rds.*` settings or the `rds_superuser` role.
pub fn managed_service(
    aurora_fn: bool,
    setting_names: &[String],
    rds_role: bool,
) -> Option<&'static str> {
    let any = |prefixes: &[&str]| {
        setting_names
            .iter()
            .any(|n| prefixes.iter().any(|p| n.starts_with(p)))
    };
    if aurora_fn {
        Some("Amazon Aurora")
    } else if any(&["alloydb", "google_columnar_engine"]) {
        Some("Google AlloyDB")
    } else if any(&["cloudsql."]) {
        Some("Google Cloud SQL")
    } else if any(&["azure."]) {
        Some("Azure Database for PostgreSQL")
    } else if rds_role || any(&["rds."]) {
        Some("Amazon RDS")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_and_memory_are_read_from_proc_texts() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n\nprocessor\t: 1\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(
            cpu_model(cpuinfo).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
        assert_eq!(
            cpu_model("processor : 0\nModel : Raspberry Pi 4\n").as_deref(),
            Some("Raspberry Pi 4")
        );
        assert_eq!(cpu_model("processor : 0\n"), None);
        assert_eq!(
            mem_total("MemTotal:       24576000 kB\nMemFree: 1 kB\n"),
            Some(24_576_000 * 1024)
        );
        assert_eq!(mem_total("MemFree: 1 kB\n"), None);
    }

    #[test]
    fn settings_keep_show_s_text_and_mask_passwords() {
        let row = |v: &[&str]| {
            v.iter()
                .map(|s| (!s.is_empty()).then(|| s.to_string()))
                .collect::<Vec<_>>()
        };
        let s = parse_settings(&[
            row(&["work_mem", "7168", "kB", "command line", "7MB"]),
            row(&[
                "primary_conninfo",
                "host=p password=s3cret",
                "",
                "configuration file",
                "host=p password=s3cret",
            ]),
        ]);
        assert_eq!(s["work_mem"].value, "7MB");
        assert_eq!(s["work_mem"].unit.as_deref(), Some("kB"));
        assert_eq!(s["primary_conninfo"].value, "host=p password=********");
        assert_eq!(s["primary_conninfo"].setting, "host=p password=********");
        assert_eq!(s["primary_conninfo"].unit, None);
    }

    #[test]
    fn managed_services_tell_themselves_apart() {
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(
            managed_service(true, &names(&["rds.extensions"]), true),
            Some("Amazon Aurora")
        );
        assert_eq!(
            managed_service(false, &names(&["rds.extensions"]), false),
            Some("Amazon RDS")
        );
        assert_eq!(managed_service(false, &[], true), Some("Amazon RDS"));
        assert_eq!(
            managed_service(false, &names(&["google_columnar_engine.enabled"]), false),
            Some("Google AlloyDB")
        );
        assert_eq!(
            managed_service(false, &names(&["cloudsql.iam_authentication"]), false),
            Some("Google Cloud SQL")
        );
        assert_eq!(
            managed_service(false, &names(&["azure.extensions"]), false),
            Some("Azure Database for PostgreSQL")
        );
        assert_eq!(managed_service(false, &names(&["work_mem"]), false), None);
    }
}
