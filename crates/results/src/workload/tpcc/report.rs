//! What a TPC-C run (`--workload=tpcc`) adds to its report: HammerDB's result line,
//! `TEST RESULT : System achieved N NOPM from M PostgreSQL TPM`, from the server's
//! counts over the measured part (as HammerDB's monitor takes them), beside the new
//! orders the clients committed; and HammerDB's time profile per transaction, as
//! pgbench-rs's table or in HammerDB 6's `xtprof` summary layout. Pure: rendered after
//! pgbench's report from the [`RunResult`].

use super::{ProfileLayout, TpccResult};
use crate::histogram::LatencyHistogram;
use crate::run::RunResult;
use crate::stats::StatsData;

/// NOPM and TPM of `r`, whose TPC-C part is `t`, when the server's counts are there.
pub fn nopm_tpm(r: &RunResult, t: &TpccResult) -> Option<(i64, i64)> {
    t.per_minute(r.bench_duration_us / 60e6)
}

/// The lines after pgbench's report of `r`, whose TPC-C part is `t`.
pub fn render(r: &RunResult, t: &TpccResult, out: &mut String) {
    match (t.server, nopm_tpm(r, t)) {
        (Some(s), Some((nopm, tpm))) => {
            out.push_str(&format!(
                "TEST RESULT : System achieved {nopm} NOPM from {tpm} PostgreSQL TPM\n"
            ));
            let same = if s.backends_left > 0 {
                format!(
                    "not comparable: {} of the run's connections were still open when the server counted",
                    s.backends_left
                )
            } else if s.new_orders == t.new_orders_committed {
                "the same".to_string()
            } else {
                format!("a difference of {}", s.new_orders - t.new_orders_committed)
            };
            out.push_str(&format!(
                "new orders in the measured part: {} counted by the server (district.d_next_o_id), {} committed by the clients: {same}\n",
                s.new_orders, t.new_orders_committed
            ));
        }
        _ => {
            if let Some(why) = &t.server_lost {
                out.push_str(&format!(
                    "TEST RESULT : none: the server's counts could not be read ({why})\n"
                ));
            }
            out.push_str(&format!(
                "new orders committed by the clients in the measured part: {}\n",
                t.new_orders_committed
            ));
        }
    }
    let profile = profile(r, t);
    match t.layout {
        ProfileLayout::Table => table(&profile, out),
        ProfileLayout::Xtprof => xtprof(r, &profile, out),
        ProfileLayout::None => {}
    }
}

/// One transaction's figures in the time profile: its scripts' counters and latencies.
struct Transaction<'a> {
    name: &'a str,
    stats: StatsData,
    histogram: Option<LatencyHistogram>,
}

impl Transaction<'_> {
    fn calls(&self) -> i64 {
        self.stats.counts.cnt
    }

    /// The latency at quantile `q`, ms.
    fn at(&self, q: f64) -> Option<f64> {
        match &self.histogram {
            Some(h) if !h.is_empty() => Some(h.value_at_quantile(q) as f64 / 1000.0),
            _ => None,
        }
    }

    /// The latencies' sample standard deviation (as HammerDB's `sigma`), ms.
    fn sd_ms(&self) -> f64 {
        let lat = &self.stats.latency;
        let n = lat.count as f64;
        if lat.count < 2 {
            return 0.0;
        }
        let var = (lat.sum2 - lat.sum * lat.sum / n) / (n - 1.0);
        var.max(0.0).sqrt() / 1000.0
    }
}

/// The profile's transactions, in the order their scripts first appear.
fn profile<'a>(r: &RunResult, t: &'a TpccResult) -> Vec<Transaction<'a>> {
    let mut names: Vec<&str> = Vec::new();
    for (_, name) in &t.profile {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    names
        .into_iter()
        .map(|name| {
            let mut stats = StatsData::default();
            let mut histogram: Option<LatencyHistogram> = None;
            let scripts = t.profile.iter().filter(|(_, n)| n == name);
            for s in scripts.filter_map(|(i, _)| r.scripts.get(*i)) {
                stats.merge(&s.stats);
                match (&mut histogram, &s.histogram) {
                    (Some(h), Some(o)) => h.merge(o),
                    (None, Some(o)) => histogram = Some(o.clone()),
                    _ => {}
                }
            }
            Transaction {
                name,
                stats,
                histogram,
            }
        })
        .collect()
}

/// pgbench-rs's table: per transaction, calls and latencies in ms.
fn table(profile: &[Transaction<'_>], out: &mut String) {
    out.push_str("time profile (ms):\n");
    out.push_str(&format!(
        "  {:<14}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n",
        "transaction", "calls", "min", "avg", "max", "p50", "p95", "p99"
    ));
    let ms = |v: Option<f64>| v.map_or_else(|| "-".to_string(), |v| format!("{v:.3}"));
    for t in profile {
        let lat = &t.stats.latency;
        let some = |v: f64| (t.calls() > 0).then_some(v / 1000.0);
        out.push_str(&format!(
            "  {:<14}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n",
            t.name,
            t.calls(),
            ms(some(lat.min)),
            ms(some(lat.sum / t.calls().max(1) as f64)),
            ms(some(lat.max)),
            ms(t.at(0.50)),
            ms(t.at(0.95)),
            ms(t.at(0.99))
        ));
    }
}

/// The line that opens and closes HammerDB's profile blocks.
const XTPROF_RULE: &str =
    "+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+";

/// HammerDB 6's `xtprof` summary of all virtual users (modules/xtprof-1.0.tm): a
/// block per transaction, busiest first, with its calls, latencies in ms and RATIO,
/// the share of the clients' time it took. Its elapsed time is the measured part's
/// (the profile's counts cover only that part, unlike HammerDB's, which include the
/// ramp-up).
fn xtprof(r: &RunResult, profile: &[Transaction<'_>], out: &mut String) {
    let elapsed_ms = r.bench_duration_us / 1000.0;
    let clients = r.settings.clients.max(1) as f64;
    let ratio = |t: &Transaction<'_>| {
        if elapsed_ms > 0.0 {
            t.stats.latency.sum / 1000.0 / elapsed_ms * 100.0 / clients
        } else {
            0.0
        }
    };
    let mut order: Vec<&Transaction<'_>> = profile.iter().filter(|t| t.calls() > 0).collect();
    order.sort_by(|a, b| ratio(b).total_cmp(&ratio(a)));
    out.push_str(XTPROF_RULE);
    out.push('\n');
    out.push_str(&format!(
        ">>>>> SUMMARY OF {} ACTIVE VIRTUAL USERS : MEDIAN ELAPSED TIME : {elapsed_ms:.0}ms\n",
        r.settings.clients
    ));
    for t in order {
        let lat = &t.stats.latency;
        let q = |q: f64| t.at(q).unwrap_or(0.0);
        out.push_str(&format!(">>>>> PROC: {}\n", t.name.to_uppercase()));
        out.push_str(&format!(
            "CALLS: {}\tMIN: {:.3}ms\tAVG: {:.3}ms\tMAX: {:.3}ms\tTOTAL: {:.3}ms\n",
            t.calls(),
            lat.min / 1000.0,
            lat.sum / t.calls() as f64 / 1000.0,
            lat.max / 1000.0,
            lat.sum / 1000.0
        ));
        out.push_str(&format!(
            "P99: {:.3}ms\tP95: {:.3}ms\tP75: {:.3}ms\tP50: {:.3}ms\tP25: {:.3}ms\tSD: {:.3}ms\tRATIO: {:.3}%\n",
            q(0.99),
            q(0.95),
            q(0.75),
            q(0.50),
            q(0.25),
            t.sd_ms(),
            ratio(t)
        ));
    }
    out.push_str(XTPROF_RULE);
    out.push('\n');
}

#[cfg(test)]
mod tests {
    use super::super::{ServerCounts, WorkloadResult};
    use super::*;
    use crate::synthetic::{run, Spec};

    /// The lines after the report of `r`, a TPC-C run.
    fn render(r: &RunResult, out: &mut String) {
        super::render(r, TpccResult::of(r.workload.as_ref()).unwrap(), out);
    }

    fn nopm_tpm(r: &RunResult) -> Option<(i64, i64)> {
        super::nopm_tpm(r, TpccResult::of(r.workload.as_ref()).unwrap())
    }

    /// The TPC-C part of `r`.
    fn part(r: &mut RunResult) -> &mut TpccResult {
        TpccResult::of_mut(r.workload.as_mut()).unwrap()
    }

    /// A synthetic run of `minutes` as a TPC-C run with these counts.
    fn tpcc_run(seconds: i64, committed: i64, server: Option<(i64, i64)>) -> RunResult {
        let mut r = run(&Spec::tpcb(3, seconds, 100.0, 1500.0));
        r.bench_duration_us = seconds as f64 * 1e6;
        r.workload = Some(WorkloadResult::Tpcc(TpccResult {
            new_orders_committed: committed,
            server: server.map(|(transactions, new_orders)| ServerCounts {
                transactions,
                new_orders,
                backends_left: 0,
            }),
            profile: vec![(0, "neword".into())],
            server_lost: None,
            layout: ProfileLayout::Table,
        }));
        r
    }

    #[test]
    fn the_result_line_is_hammerdbs_per_measured_minute_beside_the_clients_count() {
        let r = tpcc_run(120, 5_000, Some((30_000, 5_010)));
        assert_eq!(nopm_tpm(&r), Some((2_505, 15_000)));
        let mut out = String::new();
        render(&r, &mut out);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(
            lines[0],
            "TEST RESULT : System achieved 2505 NOPM from 15000 PostgreSQL TPM"
        );
        assert!(lines[1].ends_with("5010 counted by the server (district.d_next_o_id), 5000 committed by the clients: a difference of 10"));
        assert_eq!(lines[2], "time profile (ms):");
        assert!(lines[4].starts_with("  neword"), "{out}");
        let calls: i64 = lines[4].split_whitespace().nth(1).unwrap().parse().unwrap();
        assert_eq!(calls, r.scripts[0].stats.counts.cnt);
    }

    #[test]
    fn workers_add_up_and_only_worker_0_brings_the_servers_counts() {
        let mut a = part(&mut tpcc_run(60, 100, Some((1_000, 210)))).clone();
        let b = part(&mut tpcc_run(60, 110, None)).clone();
        a.merge(&b);
        assert_eq!(a.new_orders_committed, 210);
        assert_eq!(
            a.server,
            Some(ServerCounts {
                transactions: 1_000,
                new_orders: 210,
                backends_left: 0,
            })
        );
        let mut out = String::new();
        render(&tpcc_run(60, 7, None), &mut out);
        assert!(out.starts_with("new orders committed by the clients in the measured part: 7\n"));
    }

    /// #38: counts read while the run's connections were still open are not called
    /// the same as the clients'; counts that could not be read are no result.
    #[test]
    fn counts_read_too_early_are_not_comparable_and_lost_ones_are_no_result() {
        let mut r = tpcc_run(60, 500, Some((3_000, 500)));
        if let Some(s) = part(&mut r).server.as_mut() {
            s.backends_left = 3;
        }
        let mut out = String::new();
        render(&r, &mut out);
        assert!(out.contains("500 committed by the clients: not comparable: 3 of the run's connections were still open when the server counted\n"), "{out}");
        let mut r = tpcc_run(60, 500, None);
        part(&mut r).server_lost = Some("could not read the TPC-C counts: gone".into());
        let mut out = String::new();
        render(&r, &mut out);
        assert!(out.starts_with("TEST RESULT : none: the server's counts could not be read (could not read the TPC-C counts: gone)\nnew orders committed by the clients in the measured part: 500\n"), "{out}");
    }

    /// Parses an `xtprof` block's tab-separated `KEY: VALUE` fields as HammerDB users'
    /// scripts do.
    fn fields(line: &str) -> Vec<(String, String)> {
        line.split('\t')
            .map(|f| {
                let (k, v) = f.split_once(": ").unwrap();
                (k.to_string(), v.to_string())
            })
            .collect()
    }

    #[test]
    fn the_xtprof_layout_is_hammerdb_6s_summary_with_sd_in_ms() {
        let mut r = tpcc_run(60, 100, Some((1_000, 100)));
        // Three scripts: the second (payment) with a tenth of the calls.
        let mut payment = r.scripts[0].clone();
        payment.stats.counts.cnt /= 10;
        payment.stats.latency.sum /= 10.0;
        payment.stats.latency.sum2 /= 10.0;
        payment.stats.latency.count /= 10;
        r.scripts.push(payment);
        r.scripts.push(r.scripts[0].clone());
        let t = part(&mut r);
        t.layout = ProfileLayout::Xtprof;
        t.profile = vec![
            (0, "neword".into()),
            (1, "payment".into()),
            (2, "neword".into()),
        ];
        let mut out = String::new();
        render(&r, &mut out);
        let lines: Vec<&str> = out.lines().skip(2).collect();
        assert_eq!(lines[0], XTPROF_RULE);
        assert_eq!(
            lines[1],
            format!(
                ">>>>> SUMMARY OF {} ACTIVE VIRTUAL USERS : MEDIAN ELAPSED TIME : 60000ms",
                r.settings.clients
            )
        );
        let neword_calls = r.scripts[0].stats.counts.cnt + r.scripts[2].stats.counts.cnt;
        let at = lines
            .iter()
            .position(|l| *l == ">>>>> PROC: NEWORD")
            .unwrap();
        let calls = fields(lines[at + 1]);
        let keys: Vec<&str> = calls.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["CALLS", "MIN", "AVG", "MAX", "TOTAL"]);
        assert_eq!(calls[0].1, neword_calls.to_string());
        let spread = fields(lines[at + 2]);
        let keys: Vec<&str> = spread.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["P99", "P95", "P75", "P50", "P25", "SD", "RATIO"]);
        assert!(
            spread.iter().take(6).all(|(_, v)| v.ends_with("ms")),
            "{spread:?}"
        );
        assert!(spread[6].1.ends_with('%'));
        // The SD in ms, as the latencies are (HammerDB 4.12 and 5.0 printed µs).
        let sd: f64 = spread[5].1.trim_end_matches("ms").parse().unwrap();
        let avg: f64 = calls[2].1.trim_end_matches("ms").parse().unwrap();
        assert!(sd > 0.0 && sd < avg * 10.0, "{sd} {avg}");
        assert!(lines.contains(&">>>>> PROC: PAYMENT"));
        assert_eq!(lines.last(), Some(&XTPROF_RULE));
        // Busiest first, as HammerDB orders them by RATIO.
        let ratios: Vec<f64> = lines
            .iter()
            .filter(|l| l.starts_with("P99: "))
            .map(|l| fields(l)[6].1.trim_end_matches('%').parse().unwrap())
            .collect();
        assert!(ratios.windows(2).all(|w| w[0] >= w[1]), "{ratios:?}");
        part(&mut r).layout = ProfileLayout::None;
        let mut out = String::new();
        render(&r, &mut out);
        assert_eq!(out.lines().count(), 2, "{out}");
    }
}
