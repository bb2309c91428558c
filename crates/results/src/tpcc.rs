//! What a TPC-C run (`--workload=tpcc`) adds to its result: HammerDB's result line,
//! `TEST RESULT : System achieved N NOPM from M PostgreSQL TPM`, from the server's
//! counts over the measured part (as HammerDB's monitor takes them), beside the new
//! orders the clients committed; and HammerDB's time profile per transaction. Pure:
//! rendered after pgbench's report from the [`RunResult`].

pub use crate::run::tpcc_counts::{ServerCounts, TpccResult};
use crate::run::RunResult;

/// NOPM and TPM of a run, if it is a TPC-C run with the server's counts.
pub fn nopm_tpm(r: &RunResult) -> Option<(i64, i64)> {
    r.tpcc.as_ref()?.per_minute(r.bench_duration_us / 60e6)
}

/// The lines after pgbench's report.
pub fn render(r: &RunResult, out: &mut String) {
    let Some(t) = &r.tpcc else { return };
    match (t.server, nopm_tpm(r)) {
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
    time_profile(r, t, out);
}

/// HammerDB's time profile: per transaction, calls and latencies in ms.
fn time_profile(r: &RunResult, t: &TpccResult, out: &mut String) {
    out.push_str("time profile (ms):\n");
    out.push_str(&format!(
        "  {:<14}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n",
        "transaction", "calls", "min", "avg", "max", "p50", "p95", "p99"
    ));
    let mut names: Vec<&str> = Vec::new();
    for (_, name) in &t.profile {
        if !names.contains(&name.as_str()) {
            names.push(name);
        }
    }
    for name in names {
        let scripts: Vec<_> = t
            .profile
            .iter()
            .filter(|(_, n)| n == name)
            .filter_map(|(i, _)| r.scripts.get(*i))
            .collect();
        let mut stats = crate::stats::StatsData::default();
        let mut histogram: Option<crate::histogram::LatencyHistogram> = None;
        for s in &scripts {
            stats.merge(&s.stats);
            match (&mut histogram, &s.histogram) {
                (Some(h), Some(o)) => h.merge(o),
                (None, Some(o)) => histogram = Some(o.clone()),
                _ => {}
            }
        }
        let lat = &stats.latency;
        let ms = |us: f64| format!("{:.3}", us / 1000.0);
        let (min, avg, max) = if stats.counts.cnt > 0 {
            (
                ms(lat.min),
                ms(lat.sum / stats.counts.cnt as f64),
                ms(lat.max),
            )
        } else {
            ("-".into(), "-".into(), "-".into())
        };
        let q = |q: f64| match &histogram {
            Some(h) if !h.is_empty() => ms(h.value_at_quantile(q) as f64),
            _ => "-".into(),
        };
        out.push_str(&format!(
            "  {:<14}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}{:>10}\n",
            name,
            stats.counts.cnt,
            min,
            avg,
            max,
            q(0.50),
            q(0.95),
            q(0.99)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::synthetic::{run, Spec};

    /// A synthetic run of `minutes` as a TPC-C run with these counts.
    fn tpcc_run(seconds: i64, committed: i64, server: Option<(i64, i64)>) -> RunResult {
        let mut r = run(&Spec::tpcb(3, seconds, 100.0, 1500.0));
        r.bench_duration_us = seconds as f64 * 1e6;
        r.tpcc = Some(TpccResult {
            new_orders_committed: committed,
            server: server.map(|(transactions, new_orders)| ServerCounts {
                transactions,
                new_orders,
                backends_left: 0,
            }),
            profile: vec![(0, "neword".into())],
            server_lost: None,
        });
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
        let mut a = tpcc_run(60, 100, Some((1_000, 210))).tpcc.unwrap();
        let b = tpcc_run(60, 110, None).tpcc.unwrap();
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
        if let Some(s) = r.tpcc.as_mut().and_then(|t| t.server.as_mut()) {
            s.backends_left = 3;
        }
        let mut out = String::new();
        render(&r, &mut out);
        assert!(out.contains("500 committed by the clients: not comparable: 3 of the run's connections were still open when the server counted\n"), "{out}");
        let mut r = tpcc_run(60, 500, None);
        r.tpcc.as_mut().unwrap().server_lost = Some("could not read the TPC-C counts: gone".into());
        let mut out = String::new();
        render(&r, &mut out);
        assert!(out.starts_with("TEST RESULT : none: the server's counts could not be read (could not read the TPC-C counts: gone)\nnew orders committed by the clients in the measured part: 500\n"), "{out}");
    }
}
