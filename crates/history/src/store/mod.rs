//! [`Store`]: a run history in SQLite or PostgreSQL. It owns opening a store (and
//! bringing its schema up to date, `schema`), recording a run (the whole results
//! document and the figures indexed beside it, tags in their own table), and the
//! queries over it: list with filters, one run, a metric's series, removal, export.
//! What is computed from the runs (regressions, diff, trend) lives beside it, not
//! here.

pub(crate) mod backend;
mod postgres;
pub(crate) mod schema;
pub mod spec;
mod sqlite;

use crate::environment::Environment;
use crate::figures::{figures, series_key, Figures, Metric};
use crate::{HistoryError, RunId};
use backend::{Backend, Dialect, Row, Value};
use pgbench_results::ResultsFile;
use serde::Serialize;
use spec::StoreSpec;
use std::collections::BTreeMap;

/// What is recorded with a run besides its results document.
#[derive(Debug, Clone, Default)]
pub struct RecordInput {
    /// `key=value` labels (`branch=main`, `host=db1`); a key given twice keeps its
    /// last value.
    pub tags: Vec<(String, String)>,
    /// argv as run; passwords are masked again here whatever the caller did.
    pub command_line: Vec<String>,
    pub environment: Environment,
}

/// Which runs a query is about; every field left empty matches all.
#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Each `key=value` must be a tag of the run.
    pub tags: Vec<(String, String)>,
    /// Started at or after, Unix µs.
    pub since_us: Option<i64>,
    /// Started before, Unix µs.
    pub until_us: Option<i64>,
    pub workload: Option<String>,
    /// The server's system identifier, or its version (`15.20`, or `15` for every
    /// 15.x).
    pub server: Option<String>,
    /// The client machine's host name.
    pub hostname: Option<String>,
    /// At most this many runs (the newest).
    pub limit: Option<usize>,
}

/// A stored run as lists show it: its id, tags and indexed figures.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRow {
    pub id: RunId,
    pub recorded_at: String,
    #[serde(flatten)]
    pub figures: Figures,
    pub system_identifier: Option<String>,
    pub hostname: Option<String>,
    /// The key of the series it belongs to ([`series_key`]).
    pub series_key: String,
    pub tags: BTreeMap<String, String>,
    pub command_line: String,
    #[serde(skip)]
    environment_json: String,
}

impl RunRow {
    /// Its environment (an unreadable one reads as unknown).
    pub fn environment(&self) -> Environment {
        serde_json::from_str(&self.environment_json).unwrap_or_default()
    }
}

/// One stored run in full.
#[derive(Debug, Clone)]
pub struct StoredRun {
    pub row: RunRow,
    pub environment: Environment,
    pub document: ResultsFile,
}

/// One point of a metric's series.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Point {
    pub id: RunId,
    pub started_at: Option<String>,
    pub started_us: Option<i64>,
    pub value: f64,
    pub series_key: String,
    pub tags: BTreeMap<String, String>,
}

/// An open run history.
pub struct Store {
    db: Box<dyn Backend>,
    name: String,
}

/// The columns of `runs` a [`RunRow`] is read from, in [`Store::row`]'s order.
const ROW_COLUMNS: &str = "id, recorded_at, started_at, started_us, workload, script_digest, \
     scale, clients, threads, duration_s, tps, latency_avg_ms, p50_ms, p95_ms, p99_ms, \
     max_ms, failed_pct, nopm, tpm, qps, server_version, system_identifier, hostname, \
     series_key, command_line, environment";

fn int(v: &Option<String>) -> Option<i64> {
    v.as_deref()?.parse().ok()
}

fn real(v: &Option<String>) -> Option<f64> {
    v.as_deref()?.parse().ok()
}

impl Store {
    /// Opens the store a STORE string names (see [`StoreSpec::parse`]), creating it
    /// on first use.
    pub fn open(spec: &str) -> Result<Store, HistoryError> {
        Store::open_spec(&StoreSpec::parse(spec)?)
    }

    /// Opens [`spec::default_store`].
    pub fn open_default() -> Result<Store, HistoryError> {
        Store::open_spec(&spec::default_store()?)
    }

    /// Opens a parsed STORE.
    pub fn open_spec(spec: &StoreSpec) -> Result<Store, HistoryError> {
        Store::open_with(spec, schema::MIGRATIONS)
    }

    /// Opens a store with the given migrations (the tests' way to make older and
    /// newer stores).
    pub(crate) fn open_with(
        spec: &StoreSpec,
        migrations: &[schema::Migration],
    ) -> Result<Store, HistoryError> {
        let name = spec.display();
        let db: Box<dyn Backend> = match spec {
            StoreSpec::File(path) => {
                let mut db = sqlite::Sqlite::open(path)?;
                schema::ensure(&mut db, &name, migrations)?;
                Box::new(db)
            }
            StoreSpec::Postgres(conninfo) => {
                let mut db = postgres::Postgres::open(conninfo)?;
                schema::ensure(&mut db, &name, migrations)?;
                Box::new(db)
            }
        };
        Ok(Store { db, name })
    }

    /// How messages name it (its password masked).
    pub fn name(&self) -> &str {
        &self.name
    }

    fn sql(&self, text: &str) -> String {
        text.replace("{p}", schema::prefix(self.db.dialect()))
    }

    fn query(&mut self, sql: &str, params: &[Value]) -> Result<Vec<Row>, HistoryError> {
        let sql = self.sql(sql);
        self.db.query(&sql, params)
    }

    /// Runs `f` in a transaction: committed when it returns `Ok`, rolled back
    /// otherwise.
    fn transaction<T>(
        &mut self,
        f: impl FnOnce(&mut Store) -> Result<T, HistoryError>,
    ) -> Result<T, HistoryError> {
        self.db.begin()?;
        match f(self) {
            Ok(v) => {
                self.db.query("commit", &[])?;
                Ok(v)
            }
            Err(e) => {
                let _ = self.db.query("rollback", &[]);
                Err(e)
            }
        }
    }

    /// Records a run: the whole document (as [`ResultsFile::to_json`] writes it,
    /// passwords masked), its indexed figures, its tags and environment.
    pub fn record(&mut self, doc: &ResultsFile, rec: RecordInput) -> Result<RunId, HistoryError> {
        self.transaction(|s| s.insert(doc, &rec))
    }

    /// Records several runs in one transaction (an import of many files): all or
    /// none.
    pub fn record_all(
        &mut self,
        runs: &[(ResultsFile, RecordInput)],
    ) -> Result<Vec<RunId>, HistoryError> {
        self.transaction(|s| runs.iter().map(|(d, r)| s.insert(d, r)).collect())
    }

    fn insert(&mut self, doc: &ResultsFile, rec: &RecordInput) -> Result<RunId, HistoryError> {
        let doc = masked(doc);
        let mut tags: BTreeMap<&str, &str> = BTreeMap::new();
        for (k, v) in &rec.tags {
            tags.insert(k, v);
        }
        let tag_list: Vec<(String, String)> = tags
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let f = figures(&doc);
        let key = series_key(&f, &tag_list);
        let command_line: Vec<String> = rec
            .command_line
            .iter()
            .map(|a| pgbench_wire::redact_secrets(a))
            .collect();
        let env = &rec.environment;
        let hostname = env
            .client
            .as_ref()
            .and_then(|c| c.hostname.clone())
            .or_else(|| doc.client_host.as_ref()?.hostname.clone());
        let server = env.server.as_ref();
        let server_version = f.server_version.clone().or_else(|| server?.short_version());
        let environment = serde_json::to_string(env).unwrap_or_else(|_| "{}".into());
        let params: Vec<Value> = vec![
            Value::Text(crate::time::rfc3339_now()),
            f.started_at.clone().into(),
            f.started_us.into(),
            f.workload.clone().into(),
            f.script_digest.clone().into(),
            f.scale.into(),
            f.clients.into(),
            f.threads.into(),
            f.duration_s.into(),
            f.tps.into(),
            f.latency_avg_ms.into(),
            f.p50_ms.into(),
            f.p95_ms.into(),
            f.p99_ms.into(),
            f.max_ms.into(),
            f.failed_pct.into(),
            f.nopm.into(),
            f.tpm.into(),
            f.qps.into(),
            server_version.into(),
            server.and_then(|s| s.system_identifier.clone()).into(),
            hostname.into(),
            Value::Text(key),
            Value::Text(command_line.join(" ")),
            Value::Text(environment),
        ];
        let rows = self.query(
            "insert into {p}runs (recorded_at, started_at, started_us, workload, script_digest, \
             scale, clients, threads, duration_s, tps, latency_avg_ms, p50_ms, p95_ms, p99_ms, \
             max_ms, failed_pct, nopm, tpm, qps, server_version, system_identifier, hostname, \
             series_key, command_line, environment) values ($1, $2, $3, $4, $5, $6, $7, $8, \
             $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, \
             $25) returning id",
            &params,
        )?;
        let id = rows
            .first()
            .and_then(|r| int(&r[0]))
            .map(RunId)
            .ok_or_else(|| HistoryError::Store {
                store: self.name.clone(),
                message: "the new run's id was not returned".into(),
            })?;
        self.query(
            "insert into {p}documents (run_id, document) values ($1, $2)",
            &[Value::Int(id.0), Value::Text(doc.to_json())],
        )?;
        for (k, v) in tags {
            self.query(
                "insert into {p}tags (run_id, key, value) values ($1, $2, $3)",
                &[Value::Int(id.0), k.into(), v.into()],
            )?;
        }
        Ok(id)
    }

    /// The `where` clause of `filter` over `runs` and its parameters.
    fn filter_sql(filter: &Filter) -> (String, Vec<Value>) {
        let mut clauses = Vec::new();
        let mut params = Vec::new();
        let param = |v: Value, params: &mut Vec<Value>| {
            params.push(v);
            format!("${}", params.len())
        };
        for (k, v) in &filter.tags {
            let (k, v) = (
                param(k.as_str().into(), &mut params),
                param(v.as_str().into(), &mut params),
            );
            clauses.push(format!(
                "id in (select run_id from {{p}}tags where key = {k} and value = {v})"
            ));
        }
        if let Some(t) = filter.since_us {
            clauses.push(format!(
                "started_us >= {}",
                param(Value::Int(t), &mut params)
            ));
        }
        if let Some(t) = filter.until_us {
            clauses.push(format!(
                "started_us < {}",
                param(Value::Int(t), &mut params)
            ));
        }
        if let Some(w) = &filter.workload {
            clauses.push(format!(
                "workload = {}",
                param(w.as_str().into(), &mut params)
            ));
        }
        if let Some(s) = &filter.server {
            let a = param(s.as_str().into(), &mut params);
            let b = param(format!("{s}.%").as_str().into(), &mut params);
            let c = param(format!("{s} %").as_str().into(), &mut params);
            clauses.push(format!(
                "(system_identifier = {a} or server_version = {a} or server_version like {b} \
                 or server_version like {c})"
            ));
        }
        if let Some(h) = &filter.hostname {
            clauses.push(format!(
                "hostname = {}",
                param(h.as_str().into(), &mut params)
            ));
        }
        let clause = match clauses.is_empty() {
            true => String::new(),
            false => format!(" where {}", clauses.join(" and ")),
        };
        (clause, params)
    }

    fn row(r: &Row) -> RunRow {
        RunRow {
            id: RunId(int(&r[0]).unwrap_or(0)),
            recorded_at: r[1].clone().unwrap_or_default(),
            figures: Figures {
                started_at: r[2].clone(),
                started_us: int(&r[3]),
                workload: r[4].clone(),
                script_digest: r[5].clone(),
                scale: int(&r[6]),
                clients: int(&r[7]),
                threads: int(&r[8]),
                duration_s: real(&r[9]),
                tps: real(&r[10]),
                latency_avg_ms: real(&r[11]),
                p50_ms: real(&r[12]),
                p95_ms: real(&r[13]),
                p99_ms: real(&r[14]),
                max_ms: real(&r[15]),
                failed_pct: real(&r[16]),
                nopm: real(&r[17]),
                tpm: real(&r[18]),
                qps: real(&r[19]),
                server_version: r[20].clone(),
            },
            system_identifier: r[21].clone(),
            hostname: r[22].clone(),
            series_key: r[23].clone().unwrap_or_default(),
            command_line: r[24].clone().unwrap_or_default(),
            tags: BTreeMap::new(),
            environment_json: r[25].clone().unwrap_or_default(),
        }
    }

    /// The tags of the runs `selection` (a query of their ids) selects, by run.
    fn tags_of(
        &mut self,
        selection: &str,
        params: &[Value],
    ) -> Result<BTreeMap<i64, BTreeMap<String, String>>, HistoryError> {
        let rows = self.query(
            &format!("select run_id, key, value from {{p}}tags where run_id in ({selection})"),
            params,
        )?;
        let mut tags: BTreeMap<i64, BTreeMap<String, String>> = BTreeMap::new();
        for r in rows {
            if let (Some(id), Some(k), Some(v)) = (int(&r[0]), r[1].clone(), r[2].clone()) {
                tags.entry(id).or_default().insert(k, v);
            }
        }
        Ok(tags)
    }

    /// Newest first, runs whose start is unknown last: SQLite puts NULLs last in
    /// descending order by itself, and then walks the `runs_started` index backwards
    /// rather than sorting; PostgreSQL puts them first unless told.
    fn newest_first(&self) -> &'static str {
        match self.db.dialect() {
            Dialect::Sqlite => "order by started_us desc, id desc",
            Dialect::Postgres => "order by started_us desc nulls last, id desc",
        }
    }

    /// The ordered, limited selection of `filter` (`select COLUMNS from runs ...`),
    /// and its parameters.
    fn selection(&self, columns: &str, filter: &Filter) -> (String, Vec<Value>) {
        let (where_sql, params) = Store::filter_sql(filter);
        let limit = filter
            .limit
            .map_or(String::new(), |n| format!(" limit {n}"));
        let order = self.newest_first();
        (
            format!("select {columns} from {{p}}runs{where_sql} {order}{limit}"),
            params,
        )
    }

    /// The runs `filter` selects, newest first (by start, then by id; runs whose
    /// start is unknown last).
    pub fn list(&mut self, filter: &Filter) -> Result<Vec<RunRow>, HistoryError> {
        let (sql, params) = self.selection(ROW_COLUMNS, filter);
        let rows = self.query(&sql, &params)?;
        Ok(self
            .tagged(&rows, filter, &params)?
            .into_iter()
            .map(|(row, _)| row)
            .collect())
    }

    /// The runs of `rows` (selected by `filter`, with `params`), each with its tags,
    /// beside its whole row (for what was selected after [`ROW_COLUMNS`]).
    fn tagged<'r>(
        &mut self,
        rows: &'r [Row],
        filter: &Filter,
        params: &[Value],
    ) -> Result<Vec<(RunRow, &'r Row)>, HistoryError> {
        let (ids, _) = self.selection("id", filter);
        let mut tags = self.tags_of(&ids, params)?;
        Ok(rows
            .iter()
            .map(|r| {
                let mut row = Store::row(r);
                row.tags = tags.remove(&row.id.0).unwrap_or_default();
                (row, r)
            })
            .collect())
    }

    /// One run in full.
    pub fn get(&mut self, id: RunId) -> Result<StoredRun, HistoryError> {
        let rows = self.query(
            &format!(
                "select {ROW_COLUMNS}, document from {{p}}runs \
                 left join {{p}}documents on run_id = id where id = $1"
            ),
            &[Value::Int(id.0)],
        )?;
        let r = rows.first().ok_or_else(|| HistoryError::NoRun {
            store: self.name.clone(),
            id,
        })?;
        let mut row = Store::row(r);
        row.tags = self
            .tags_of("select $1", &[Value::Int(id.0)])?
            .remove(&id.0)
            .unwrap_or_default();
        let text = r.last().cloned().flatten().unwrap_or_default();
        let document = ResultsFile::from_json(&text).map_err(|e| HistoryError::Document {
            store: self.name.clone(),
            id,
            message: e.to_string(),
        })?;
        Ok(StoredRun {
            environment: row.environment(),
            row,
            document,
        })
    }

    /// `metric` of the runs `filter` selects that have it, oldest first (runs whose
    /// start is unknown last, in the order recorded).
    pub fn series(&mut self, filter: &Filter, metric: Metric) -> Result<Vec<Point>, HistoryError> {
        let (where_sql, params) = Store::filter_sql(filter);
        let column = metric.column();
        let and = if where_sql.is_empty() {
            " where"
        } else {
            " and"
        };
        let selected = format!("{{p}}runs{where_sql}{and} {column} is not null");
        let sql = format!(
            "select id, started_at, started_us, {column}, series_key from {selected} \
             order by started_us asc nulls last, id"
        );
        let rows = self.query(&sql, &params)?;
        let mut tags = self.tags_of(&format!("select id from {selected}"), &params)?;
        Ok(rows
            .iter()
            .filter_map(|r| {
                let id = int(&r[0])?;
                Some(Point {
                    id: RunId(id),
                    started_at: r[1].clone(),
                    started_us: int(&r[2]),
                    value: real(&r[3])?,
                    series_key: r[4].clone().unwrap_or_default(),
                    tags: tags.remove(&id).unwrap_or_default(),
                })
            })
            .collect())
    }

    /// Removes a run, its document and its tags.
    pub fn rm(&mut self, id: RunId) -> Result<(), HistoryError> {
        let name = self.name.clone();
        self.transaction(|s| {
            s.query("delete from {p}tags where run_id = $1", &[Value::Int(id.0)])?;
            s.query(
                "delete from {p}documents where run_id = $1",
                &[Value::Int(id.0)],
            )?;
            let gone = s.query(
                "delete from {p}runs where id = $1 returning id",
                &[Value::Int(id.0)],
            )?;
            match gone.is_empty() {
                true => Err(HistoryError::NoRun { store: name, id }),
                false => Ok(()),
            }
        })
    }

    /// The stored documents of the runs `filter` selects, newest first, as text.
    pub fn documents(&mut self, filter: &Filter) -> Result<Vec<(RunRow, String)>, HistoryError> {
        let (where_sql, params) = Store::filter_sql(filter);
        let limit = filter
            .limit
            .map_or(String::new(), |n| format!(" limit {n}"));
        let order = self.newest_first();
        let rows = self.query(
            &format!(
                "select {ROW_COLUMNS}, document from {{p}}runs \
                 left join {{p}}documents on run_id = id{where_sql} {order}{limit}"
            ),
            &params,
        )?;
        Ok(self
            .tagged(&rows, filter, &params)?
            .into_iter()
            .map(|(row, r)| (row, r.last().cloned().flatten().unwrap_or_default()))
            .collect())
    }

    /// Rows of a statement over the store's tables (`{p}` before each table's
    /// name): what the tests read the stored text with.
    #[cfg(test)]
    pub(crate) fn raw_query(&mut self, sql: &str) -> Result<Vec<Row>, HistoryError> {
        self.query(sql, &[])
    }
}

/// `doc` with the passwords of its command line and connection string masked, as
/// `pgbench-report` masks what it reads.
fn masked(doc: &ResultsFile) -> ResultsFile {
    let mut doc = doc.clone();
    for arg in &mut doc.command_line {
        *arg = pgbench_wire::redact_secrets(arg);
    }
    if let Some(serde_json::Value::String(db)) = doc.options.get_mut("dbname") {
        *db = pgbench_wire::redact_secrets(db);
    }
    for step in &mut doc.steps {
        step.file = masked(&step.file);
    }
    doc
}
