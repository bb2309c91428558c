//! A [`Snapshot`] in Prometheus's exposition formats, through `prometheus-client`'s
//! encoders: OpenMetrics text for a scraper that asks for it (Prometheus does), the
//! Prometheus text format 0.0.4 otherwise (`curl`, `promtool check metrics`). Pure.
//!
//! Names follow Prometheus's conventions: a `pgbench_` prefix, base units in the name
//! (`_seconds`), `_total` on counters; every series of a script carries
//! `script="N"` (the report's "SQL script N"), and under `--worker=I/N` every series
//! carries `worker="I"`, so `sum()` over the workers is the merged run; a sweep's or
//! search's step carries `step="N"`. Under `--scenarios`, a script's series also
//! carry its scenario's name, `scenario="NAME"` (each script is one scenario's), so
//! `sum by (scenario)` gives each scenario's figures. A load (`-i`) has series of its
//! own, `pgbench_load_...`, per `table` and `step` ([`render_load`]).

use super::live::{Phase, ScriptSnapshot, Snapshot, StageTarget, BUCKET_BOUNDS_US};
use super::load::LoadSnapshot;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::{Registry, Unit};
use std::borrow::Cow;
use std::fmt::Error;

/// The `Content-Type` of OpenMetrics text 1.0.0.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";
/// The `Content-Type` of the Prometheus text format 0.0.4.
pub const TEXT_CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// Which format a scrape gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    OpenMetrics,
    Text,
}

impl Format {
    /// The format an `Accept` header asks for: OpenMetrics when it names it.
    pub fn accepted(accept: Option<&str>) -> Format {
        match accept {
            Some(a) if a.contains("application/openmetrics-text") => Format::OpenMetrics,
            _ => Format::Text,
        }
    }

    pub fn content_type(self) -> &'static str {
        match self {
            Format::OpenMetrics => OPENMETRICS_CONTENT_TYPE,
            Format::Text => TEXT_CONTENT_TYPE,
        }
    }
}

/// What the series are labelled with besides the figures.
#[derive(Debug, Clone)]
pub struct Labels {
    /// `--worker=I/N`: I.
    pub worker: Option<u32>,
    /// `--sweep`, `--find-max-rate`: the step under way (1, 2, ...), so that each
    /// step's counters are series of their own.
    pub step: Option<u32>,
    /// Each script's name and weight.
    pub scripts: Vec<(String, i64)>,
    /// `--scenarios`: each script's scenario; empty without.
    pub scenarios: Vec<String>,
}

/// The snapshot in the given format.
pub fn render(labels: &Labels, snapshot: Snapshot, format: Format) -> String {
    let constant = [("worker", labels.worker), ("step", labels.step)]
        .into_iter()
        .filter_map(|(name, v)| Some((Cow::Borrowed(name), Cow::Owned(v?.to_string()))));
    let mut registry = Registry::with_prefix_and_labels("pgbench", constant);
    registry.register_collector(Box::new(View {
        scripts: labels.scripts.clone(),
        scenarios: labels.scenarios.clone(),
        snapshot,
    }));
    encoded(&registry, format)
}

/// A scrape's view: the snapshot with its scripts' names.
#[derive(Debug)]
struct View {
    scripts: Vec<(String, i64)>,
    scenarios: Vec<String>,
    snapshot: Snapshot,
}

/// A metric family's descriptor.
struct Family<'a> {
    name: &'a str,
    help: &'a str,
    unit: Option<&'static Unit>,
    kind: MetricType,
}

static SECONDS: Unit = Unit::Seconds;

const fn family<'a>(
    name: &'a str,
    help: &'a str,
    unit: Option<&'static Unit>,
    kind: MetricType,
) -> Family<'a> {
    Family {
        name,
        help,
        unit,
        kind,
    }
}

/// A figure of a per-script series: its name, help and how to read it.
type Figure<T, V> = (&'static str, &'static str, fn(&T) -> V);

impl Collector for View {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), Error> {
        use MetricType::{Counter, Gauge};
        let counters: [Figure<ScriptSnapshot, u64>; 5] = [
            (
                "transactions",
                "Successful transactions (the report's number of transactions actually processed)",
                |s| s.stats.counts.cnt as u64,
            ),
            (
                "retries",
                "Retries of serialization and deadlock failures",
                |s| s.stats.counts.retries as u64,
            ),
            (
                "retried_transactions",
                "Transactions retried at least once",
                |s| s.stats.counts.retried as u64,
            ),
            (
                "skipped_transactions",
                "Transactions skipped for -L under -R",
                |s| s.stats.counts.skipped as u64,
            ),
            (
                "late_transactions",
                "Successful transactions above the -L latency limit",
                |s| s.late,
            ),
        ];
        for (name, help, value) in counters {
            let mut m = descriptor(&mut enc, family(name, help, None, Counter))?;
            for (labels, s) in self.per_script() {
                m.encode_family(&labels)?
                    .encode_counter::<NoLabelSet, u64, f64>(&value(s), None)?;
            }
        }
        if let Some(warm) = &self.snapshot.warmup {
            let help = "Successful transactions of the --warmup, counted apart from the run";
            descriptor(&mut enc, family("warmup_transactions", help, None, Counter))?
                .encode_counter::<NoLabelSet, u64, f64>(&(warm.counts.cnt as u64), None)?;
        }
        self.failures(&mut enc)?;
        self.histograms(&mut enc)?;
        self.averages(&mut enc)?;
        self.clients(&mut enc)?;
        let snap = &self.snapshot;
        let mut m = descriptor(
            &mut enc,
            family(
                "phase",
                "The run's phase: 1 for the current one",
                None,
                Gauge,
            ),
        )?;
        for (phase, name) in Phase::ALL {
            let v = i64::from(phase == snap.phase);
            m.encode_family(&[("phase", name)])?.encode_gauge(&v)?;
        }
        let help = "The run's progress against -T or -t, 0 to 1";
        descriptor(&mut enc, family("progress_ratio", help, None, Gauge))?
            .encode_gauge(&snap.progress)?;
        self.stage(&mut enc)?;
        let info = family("script", "The run's scripts", None, MetricType::Info);
        let mut m = descriptor(&mut enc, info)?;
        for (i, (name, weight)) in self.scripts.iter().enumerate() {
            let mut labels = self.script_labels(i);
            labels.extend([("name", name.clone()), ("weight", weight.to_string())]);
            m.encode_info(&labels)?;
        }
        Ok(())
    }
}

fn descriptor<'e>(
    enc: &'e mut DescriptorEncoder,
    f: Family<'e>,
) -> Result<prometheus_client::encoding::MetricEncoder<'e>, Error> {
    enc.encode_descriptor(f.name, f.help, f.unit, f.kind)
}

impl View {
    /// Script `i`'s labels: `script`, and its `scenario` under `--scenarios`.
    fn script_labels(&self, i: usize) -> Vec<(&'static str, String)> {
        let mut labels = vec![("script", (i + 1).to_string())];
        if let Some(scenario) = self.scenarios.get(i) {
            labels.push(("scenario", scenario.clone()));
        }
        labels
    }

    /// Each script's labels with its figures.
    fn per_script(&self) -> impl Iterator<Item = (Vec<(&'static str, String)>, &ScriptSnapshot)> {
        self.snapshot
            .scripts
            .iter()
            .enumerate()
            .map(|(i, s)| (self.script_labels(i), s))
    }

    fn failures(&self, enc: &mut DescriptorEncoder) -> Result<(), Error> {
        let help = "Transactions failed for good, by kind (other: under --continue-on-error)";
        let mut m = descriptor(enc, family("failures", help, None, MetricType::Counter))?;
        for (script, s) in self.per_script() {
            for (kind, n) in [
                ("serialization", s.stats.counts.serialization_failures),
                ("deadlock", s.stats.counts.deadlock_failures),
                // --continue-on-error's other SQL errors.
                ("other", s.stats.counts.other_sql_failures),
            ] {
                let mut labels = script.clone();
                labels.push(("kind", kind.to_string()));
                m.encode_family(&labels)?
                    .encode_counter::<NoLabelSet, u64, f64>(&(n as u64), None)?;
            }
        }
        Ok(())
    }

    fn histograms(&self, enc: &mut DescriptorEncoder) -> Result<(), Error> {
        let help = "Latency of successful transactions";
        let f = family("latency", help, Some(&SECONDS), MetricType::Histogram);
        let mut m = descriptor(enc, f)?;
        for (labels, s) in self.per_script() {
            let hist = m.encode_family(&labels)?;
            histogram(hist, s.stats.latency.sum, &s.latency_buckets)?;
        }
        if self
            .snapshot
            .scripts
            .iter()
            .all(|s| s.lag_buckets.is_none())
        {
            return Ok(());
        }
        let help = "Schedule lag of successful transactions under -R";
        let f = family("schedule_lag", help, Some(&SECONDS), MetricType::Histogram);
        let mut m = descriptor(enc, f)?;
        for (labels, s) in self.per_script() {
            if let Some(buckets) = &s.lag_buckets {
                histogram(m.encode_family(&labels)?, s.stats.lag.sum, buckets)?;
            }
        }
        Ok(())
    }

    /// The `-P` line's averages of the last interval.
    fn averages(&self, enc: &mut DescriptorEncoder) -> Result<(), Error> {
        let throttled = self
            .snapshot
            .scripts
            .iter()
            .any(|s| s.lag_buckets.is_some());
        let kinds: [Figure<super::live::Averages, f64>; 2] = [
            (
                "latency_average",
                "Average latency over the last -P interval (a second without -P)",
                |a| a.latency_us,
            ),
            (
                "schedule_lag_average",
                "Average schedule lag over the last -P interval (a second without -P)",
                |a| a.lag_us,
            ),
        ];
        for (name, help, value) in kinds.into_iter().take(1 + usize::from(throttled)) {
            let f = family(name, help, Some(&SECONDS), MetricType::Gauge);
            let mut m = descriptor(enc, f)?;
            for (labels, s) in self.per_script() {
                if let Some(a) = &s.average {
                    m.encode_family(&labels)?.encode_gauge(&(value(a) / 1e6))?;
                }
            }
        }
        Ok(())
    }

    /// `--rate-stages`, `--client-stages`: the stage in force and the schedule's
    /// target, as the `-P` line's `stage 2/3, rate 233.3`; nothing without stages.
    fn stage(&self, enc: &mut DescriptorEncoder) -> Result<(), Error> {
        let Some(now) = &self.snapshot.stage else {
            return Ok(());
        };
        let gauges = [
            (
                "stage",
                "The stage in force, from 1 (as the report's stages block numbers them)",
                now.stage,
            ),
            ("stages", "The number of stages", now.stages),
        ];
        for (name, help, v) in gauges {
            descriptor(enc, family(name, help, None, MetricType::Gauge))?
                .encode_gauge(&(v as i64))?;
        }
        match now.target {
            StageTarget::Rate(rate) => {
                let help = "--rate-stages: the -R schedule's rate now, transactions per second";
                descriptor(enc, family("stage_rate", help, None, MetricType::Gauge))?
                    .encode_gauge(&rate)
            }
            StageTarget::Clients(clients) => {
                let help = "--client-stages: the clients the stages have active now";
                descriptor(enc, family("stage_clients", help, None, MetricType::Gauge))?
                    .encode_gauge(&(clients as i64))
            }
        }
    }

    fn clients(&self, enc: &mut DescriptorEncoder) -> Result<(), Error> {
        let snap = &self.snapshot;
        let gauges = [
            (
                "clients_connected",
                "Clients with their connection made (under -C, the clients running)",
                snap.clients_connected,
            ),
            (
                "clients_running",
                "Clients started and not yet done",
                snap.clients_running,
            ),
        ];
        for (name, help, v) in gauges {
            descriptor(enc, family(name, help, None, MetricType::Gauge))?.encode_gauge(&v)?;
        }
        let help = "Clients aborted";
        descriptor(
            enc,
            family("clients_aborted", help, None, MetricType::Counter),
        )?
        .encode_counter::<NoLabelSet, u64, f64>(&(snap.aborted as u64), None)?;
        let Some(o) = snap.outages else {
            return Ok(());
        };
        let help = "--reconnect: clients out of service now (connection lost, no success since)";
        descriptor(enc, family("outage_clients", help, None, MetricType::Gauge))?
            .encode_gauge(&(o.clients_out as i64))?;
        let help = "--reconnect: connections made again after a loss";
        descriptor(enc, family("reconnects", help, None, MetricType::Counter))?
            .encode_counter::<NoLabelSet, u64, f64>(&(o.reconnects as u64), None)?;
        let help = "--reconnect: failed transactions in doubt (connection lost after a statement that may commit was sent)";
        let in_doubt: i64 = snap.scripts.iter().map(|s| s.stats.counts.in_doubt).sum();
        descriptor(
            enc,
            family("transactions_in_doubt", help, None, MetricType::Counter),
        )?
        .encode_counter::<NoLabelSet, u64, f64>(&(in_doubt as u64), None)
    }
}

/// `registry`'s metrics in the given format.
fn encoded(registry: &Registry, format: Format) -> String {
    let mut out = String::new();
    // Writing into a String does not fail; an encoder error would be ours.
    let _ = match format {
        Format::OpenMetrics => prometheus_client::encoding::text::encode(&mut out, registry),
        Format::Text => prometheus_client::encoding::prometheus_text::encode(&mut out, registry),
    };
    out
}

/// A load's snapshot (`-i` under `--metrics-listen`) in the given format.
pub fn render_load(snapshot: LoadSnapshot, format: Format) -> String {
    let mut registry = Registry::with_prefix("pgbench");
    registry.register_collector(Box::new(LoadView(snapshot)));
    encoded(&registry, format)
}

/// A scrape's view of a load.
#[derive(Debug)]
struct LoadView(LoadSnapshot);

impl Collector for LoadView {
    fn encode(&self, mut enc: DescriptorEncoder) -> Result<(), Error> {
        use MetricType::{Counter, Gauge};
        let snap = &self.0;
        let help = "Rows written to each table by this load so far";
        let mut m = descriptor(&mut enc, family("load_rows", help, None, Counter))?;
        for t in &snap.tables {
            m.encode_family(&[("table", t.name.as_str())])?
                .encode_counter::<NoLabelSet, u64, f64>(&t.rows, None)?;
        }
        let help = "Rows this load is to write to each table, where known";
        let mut m = descriptor(&mut enc, family("load_rows_expected", help, None, Gauge))?;
        for t in &snap.tables {
            if let Some(n) = t.expected {
                m.encode_family(&[("table", t.name.as_str())])?
                    .encode_gauge(&(n as i64))?;
            }
        }
        let help = "The load's step: 1 for the one under way (done once all have run)";
        let mut m = descriptor(&mut enc, family("load_step", help, None, Gauge))?;
        for (step, now) in &snap.steps {
            m.encode_family(&[("step", step.as_str())])?
                .encode_gauge(&i64::from(*now))?;
        }
        if let Some((done, total)) = snap.units {
            let help = "--resume, --shard: units of this process's share recorded as loaded";
            descriptor(&mut enc, family("load_units_done", help, None, Gauge))?
                .encode_gauge(&(done as i64))?;
            let help = "--resume, --shard: units of this process's share";
            descriptor(&mut enc, family("load_units", help, None, Gauge))?
                .encode_gauge(&(total as i64))?;
        }
        Ok(())
    }
}

/// One histogram from the counts between [`BUCKET_BOUNDS_US`] and the sum (µs).
fn histogram(
    mut m: prometheus_client::encoding::MetricEncoder<'_>,
    sum_us: f64,
    counts: &[u64],
) -> Result<(), Error> {
    let buckets: Vec<(f64, u64)> = BUCKET_BOUNDS_US
        .iter()
        .map(|&b| b as f64 / 1e6)
        .chain([f64::INFINITY])
        .zip(counts.iter().copied())
        .collect();
    let count = counts.iter().sum();
    m.encode_histogram::<NoLabelSet>(sum_us / 1e6, count, &buckets, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::live::{Averages, ScriptSnapshot, StageNow};
    use pgbench_results::{Counts, StatsData};

    fn snapshot() -> Snapshot {
        let mut stats = StatsData {
            counts: Counts {
                cnt: 3,
                retries: 2,
                retried: 1,
                deadlock_failures: 1,
                other_sql_failures: 4,
                in_doubt: 3,
                ..Default::default()
            },
            ..Default::default()
        };
        stats.latency.sum = 1_500.0;
        let mut latency_buckets = vec![0; BUCKET_BOUNDS_US.len() + 1];
        latency_buckets[1] = 2;
        latency_buckets[19] = 1;
        Snapshot {
            phase: Phase::Measured,
            warmup: None,
            clients_connected: 4,
            clients_running: 3,
            aborted: 1,
            progress: 0.5,
            outages: Some(crate::metrics::live::Outages {
                reconnects: 8,
                clients_out: 2,
            }),
            stage: None,
            scripts: vec![ScriptSnapshot {
                stats,
                late: 1,
                latency_buckets,
                lag_buckets: None,
                average: Some(Averages {
                    latency_us: 500.0,
                    lag_us: 0.0,
                }),
            }],
        }
    }

    fn labels() -> Labels {
        Labels {
            worker: Some(1),
            step: None,
            scripts: vec![("<builtin: select only>".into(), 1)],
            scenarios: Vec::new(),
        }
    }

    #[test]
    fn prometheus_text_names_units_and_labels() {
        let text = render(&labels(), snapshot(), Format::Text);
        for line in [
            "# TYPE pgbench_transactions_total counter",
            "pgbench_transactions_total{worker=\"1\",script=\"1\"} 3",
            "pgbench_retries_total{worker=\"1\",script=\"1\"} 2",
            "pgbench_failures_total{worker=\"1\",script=\"1\",kind=\"deadlock\"} 1",
            "pgbench_failures_total{worker=\"1\",script=\"1\",kind=\"other\"} 4",
            "pgbench_late_transactions_total{worker=\"1\",script=\"1\"} 1",
            "# TYPE pgbench_latency_seconds histogram",
            "pgbench_latency_seconds_bucket{worker=\"1\",script=\"1\",le=\"5e-05\"} 0",
            "pgbench_latency_seconds_bucket{worker=\"1\",script=\"1\",le=\"0.0001\"} 2",
            "pgbench_latency_seconds_bucket{worker=\"1\",script=\"1\",le=\"60\"} 2",
            "pgbench_latency_seconds_bucket{worker=\"1\",script=\"1\",le=\"+Inf\"} 3",
            "pgbench_latency_seconds_count{worker=\"1\",script=\"1\"} 3",
            "pgbench_latency_seconds_sum{worker=\"1\",script=\"1\"} 0.0015",
            "pgbench_latency_average_seconds{worker=\"1\",script=\"1\"} 0.0005",
            "pgbench_clients_connected{worker=\"1\"} 4",
            "pgbench_clients_running{worker=\"1\"} 3",
            "pgbench_clients_aborted_total{worker=\"1\"} 1",
            "pgbench_outage_clients{worker=\"1\"} 2",
            "pgbench_reconnects_total{worker=\"1\"} 8",
            "pgbench_transactions_in_doubt_total{worker=\"1\"} 3",
            "pgbench_phase{worker=\"1\",phase=\"measured\"} 1",
            "pgbench_phase{worker=\"1\",phase=\"finished\"} 0",
            "pgbench_progress_ratio{worker=\"1\"} 0.5",
            "pgbench_script_info{worker=\"1\",script=\"1\",name=\"<builtin: select only>\",weight=\"1\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
        }
        assert!(!text.contains("schedule_lag"), "no -R, no lag: {text}");
        assert!(!text.contains("# EOF"));
    }

    #[test]
    fn the_stage_and_the_schedules_target() {
        let mut snap = snapshot();
        let text = render(&labels(), snap.clone(), Format::Text);
        assert!(!text.contains("pgbench_stage"), "no stages, none: {text}");
        snap.stage = Some(StageNow {
            stage: 2,
            stages: 3,
            target: StageTarget::Rate(233.25),
        });
        let text = render(&labels(), snap.clone(), Format::Text);
        for line in [
            "# TYPE pgbench_stage gauge",
            "pgbench_stage{worker=\"1\"} 2",
            "# TYPE pgbench_stages gauge",
            "pgbench_stages{worker=\"1\"} 3",
            "# TYPE pgbench_stage_rate gauge",
            "pgbench_stage_rate{worker=\"1\"} 233.25",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
        }
        assert!(!text.contains("pgbench_stage_clients"), "{text}");
        snap.stage = Some(StageNow {
            stage: 1,
            stages: 4,
            target: StageTarget::Clients(3.0),
        });
        let text = render(&labels(), snap, Format::OpenMetrics);
        for line in [
            "# TYPE pgbench_stage gauge",
            "pgbench_stage{worker=\"1\"} 1",
            "pgbench_stages{worker=\"1\"} 4",
            "# TYPE pgbench_stage_clients gauge",
            "pgbench_stage_clients{worker=\"1\"} 3",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
        }
        assert!(!text.contains("pgbench_stage_rate"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
    }

    #[test]
    fn a_scenarios_scripts_carry_its_name() {
        let labels = Labels {
            worker: None,
            scenarios: vec!["reads".into()],
            ..labels()
        };
        let text = render(&labels, snapshot(), Format::Text);
        for line in [
            "pgbench_transactions_total{script=\"1\",scenario=\"reads\"} 3",
            "pgbench_failures_total{script=\"1\",scenario=\"reads\",kind=\"deadlock\"} 1",
            "pgbench_latency_seconds_count{script=\"1\",scenario=\"reads\"} 3",
            "pgbench_script_info{script=\"1\",scenario=\"reads\",name=\"<builtin: select only>\",weight=\"1\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line:?} in\n{text}");
        }
    }

    #[test]
    fn openmetrics_has_units_and_the_end_marker() {
        let text = render(&labels(), snapshot(), Format::OpenMetrics);
        assert!(
            text.contains("# UNIT pgbench_latency_seconds seconds\n"),
            "{text}"
        );
        assert!(
            text.contains("# TYPE pgbench_transactions counter\n"),
            "{text}"
        );
        assert!(text.contains("# TYPE pgbench_script info\n"), "{text}");
        assert!(text.ends_with("# EOF\n"), "{text}");
        assert_eq!(
            Format::accepted(Some(
                "application/openmetrics-text;version=1.0.0,text/plain;q=0.5"
            )),
            Format::OpenMetrics
        );
        assert_eq!(Format::accepted(Some("*/*")), Format::Text);
        assert_eq!(Format::accepted(None), Format::Text);
    }

    #[test]
    fn a_load_has_rows_per_table_its_steps_and_units() {
        use crate::metrics::load::{LoadSnapshot, TableSnapshot};
        let snap = LoadSnapshot {
            tables: vec![
                TableSnapshot {
                    name: "pgbench_accounts".into(),
                    rows: 300,
                    expected: Some(2_000_000),
                },
                TableSnapshot {
                    name: "order_line".into(),
                    rows: 7,
                    expected: None,
                },
            ],
            steps: vec![
                ("drop tables".into(), false),
                ("client-side generate".into(), true),
            ],
            units: Some((3, 21)),
        };
        let text = render_load(snap, Format::Text);
        for line in [
            "pgbench_load_rows_total{table=\"pgbench_accounts\"} 300",
            "pgbench_load_rows_total{table=\"order_line\"} 7",
            "pgbench_load_rows_expected{table=\"pgbench_accounts\"} 2000000",
            "pgbench_load_step{step=\"drop tables\"} 0",
            "pgbench_load_step{step=\"client-side generate\"} 1",
            "pgbench_load_units_done 3",
            "pgbench_load_units 21",
        ] {
            assert!(text.lines().any(|l| l == line), "{line} in\n{text}");
        }
        assert!(!text.contains("pgbench_load_rows_expected{table=\"order_line\"}"));
    }
}
