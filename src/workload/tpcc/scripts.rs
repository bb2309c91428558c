//! The pgbench scripts of a TPC-C run, one per transaction, in each mode. Every script
//! is built the same way: the client's first transaction draws what HammerDB's virtual
//! user draws once (its home warehouse, its stock-level district); each transaction
//! takes its warehouse (the home one, or one of the client's share under
//! `allwarehouse`), draws its parameters, pauses for the thinking time owed from the
//! previous transaction and its own keying time (`keyandthink`), calls the mode's
//! routine, and draws the thinking time it leaves owed. The pauses are `\sleep`s of a
//! script whose sleeps are untimed: outside the transaction's latency, and cut short at
//! the end of `-T`, so a sleeping client stops there.

use super::{Config, Mode};
use crate::workload::ScriptContext;
use std::fmt::Write;

/// One script of a run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Script {
    pub name: &'static str,
    pub description: &'static str,
    pub weight: i64,
    pub text: String,
}

/// Each mode's scripts, in order, by their transaction's name in the time profile.
pub const PROFILE: [(Mode, &[&str]); 2] = [
    (
        Mode::Hammerdb,
        &["neword", "payment", "delivery", "slev", "ostat"],
    ),
    (
        Mode::Spec,
        &["neword", "neword", "payment", "delivery", "slev", "ostat"],
    ),
];

/// A transaction's keying time (s) and mean thinking time (ms): HammerDB's driver's
/// (`keytime`, `thinktime` in pgoltp.tcl) or TPC-C 5.2.5.7's minimums, which give the
/// order status and the delivery each other's thinking time.
#[derive(Debug, Clone, Copy)]
struct Pauses {
    keying_s: u32,
    thinking_ms: u32,
}

const fn pauses(keying_s: u32, thinking_s: u32) -> Pauses {
    Pauses {
        keying_s,
        thinking_ms: thinking_s * 1000,
    }
}

/// The last names' syllables as an SQL expression of `:nrnd` (TPC-C 4.3.2.3), for the
/// CALLs of the procedures, which take the name itself.
const LAST_NAME_SQL: &str = "(array['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:nrnd / 100 + 1] \
     || (array['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:nrnd / 10 % 10 + 1] \
     || (array['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[:nrnd % 10 + 1]";

/// The record `ostat` returns, as HammerDB's prepared statement names it.
const OSTAT_COLUMNS: &str = "ol_i_id integer, ol_supply_w_id integer, ol_quantity smallint, \
     ol_amount numeric, ol_delivery_d timestamp with time zone, out_os_c_id integer, \
     out_os_c_last character varying, os_c_first character varying, \
     os_c_middle character varying, os_c_balance numeric, os_o_id integer, \
     os_entdate timestamp without time zone, os_o_carrier_id integer";

/// The scripts of a run of `config`.
pub fn scripts(config: &Config, ctx: ScriptContext) -> Vec<Script> {
    let b = Builder {
        config,
        clients: (ctx.clients * ctx.workers.max(1)).max(1),
    };
    match config.mode {
        Mode::Hammerdb => b.hammerdb(),
        Mode::Spec => b.spec(),
    }
}

struct Builder<'a> {
    config: &'a Config,
    /// Every client of the run (all `--worker`s'), among whom `allwarehouse` splits
    /// the warehouses.
    clients: usize,
}

impl Builder<'_> {
    /// A script: the comment, the client's first draws and the warehouse, the
    /// transaction's draws, its pauses, its SQL and the thinking time it leaves.
    fn script(&self, comment: &str, draws: &str, pauses: Pauses, sql: &str) -> String {
        let mut s = String::new();
        let clients = self.clients;
        // Writing into a String cannot fail.
        let _ = writeln!(s, "-- {comment}");
        s.push_str("\\if :home = 0\n");
        match self.config.mode {
            // HammerDB: a random home warehouse and stock-level district per virtual
            // user (2.4.1.1); the server's random() that the functions draw from is
            // seeded from the client's generator, so a seeded run repeats.
            Mode::Hammerdb => s.push_str(
                "\\set home random(1, :scale)\n\\set slev_district random(1, 10)\n\
                 \\set seed random(0, 2147483647)\nSELECT setseed(:seed / 2147483648.0);\n",
            ),
            // TPC-C: terminals spread evenly over the warehouses and their districts.
            Mode::Spec => s.push_str(
                "\\set home :client_id % :scale + 1\n\\set slev_district :client_id % 10 + 1\n",
            ),
        }
        s.push_str("\\endif\n");
        // HammerDB's pg_allwarehouse: client k's warehouses are k+1, k+1+C, ... (C
        // clients), as many as it takes to cover them all; each transaction picks one.
        let _ = writeln!(
            s,
            "\\if :allwarehouse\n\\set w_id (:client_id + random(0, (:scale - 1) / {clients}) * {clients}) % :scale + 1\n\\else\n\\set w_id :home\n\\endif"
        );
        s.push_str(draws);
        let _ = writeln!(
            s,
            "\\if :keyandthink\n\\sleep :think_ms ms\n\\sleep {} s\n\\endif",
            pauses.keying_s
        );
        s.push_str(sql);
        // TPC-C 5.2.5.4: a negative exponential, capped at ten times its mean.
        let mean = pauses.thinking_ms;
        let _ = writeln!(
            s,
            "\\if :keyandthink\n\\set think_ms least(int(-{mean} * ln(random(1, 1000000) / 1000000.0)), {})\n\\endif",
            mean * 10
        );
        s
    }

    /// HammerDB's driver's draws and calls (`neword`, `payment`, ... in pgoltp.tcl).
    fn hammerdb(&self) -> Vec<Script> {
        let procs = self.config.storedprocs;
        let by_name = "\\set byname 0\n\\if random(1, 100) <= 60\n\\set byname 1\n\\endif\n";
        // HammerDB draws the name by NURand(255) with C = 123, as at load; its
        // prepared functions are passed the literal text '$8' / '$5' instead.
        let nrnd = "\\set nrnd ((random(0, 255) | random(0, 999)) + 123) % 1000\n";
        let name = format!("CASE WHEN :byname = 1 THEN {LAST_NAME_SQL} ELSE '' END");
        let pick = |call: String, select: String| if procs { call } else { select };
        let new_order = self.script(
            "HammerDB new order: uniform district, customer and line count; neword draws the items",
            "\\set d_id random(1, 10)\n\\set c_id random(1, 3000)\n\\set ol_cnt random(5, 15)\n",
            pauses(18, 12),
            &pick(
                "CALL neword(:w_id, :scale, :d_id, :c_id, :ol_cnt, 0.0, '', '', 0.0, 0.0, 0, localtimestamp(0));\n".into(),
                "SELECT neword(:w_id, :scale, :d_id, :c_id, :ol_cnt, 0);\n".into(),
            ),
        );
        let payment_draws = format!(
            "\\set d_id random(1, 10)\n\\set c_w_id :w_id\n\\set c_d_id :d_id\n\
             \\if random(1, 100) > 85\n\\set c_d_id random(1, 10)\n\
             \\set c_w_id (:w_id + random(0, greatest(:scale - 2, 0))) % :scale + 1\n\\endif\n\
             {}\\set c_id random(1, 3000)\n{by_name}\\set amount random(1, 5000)\n",
            if procs { nrnd } else { "" }
        );
        let payment = self.script(
            "HammerDB payment: 15% for a customer of another warehouse, 60% by last name",
            &payment_draws,
            pauses(3, 12),
            &pick(
                format!(
                    "CALL payment(:w_id, :d_id, :c_w_id, :c_d_id, :byname, :amount, '0', {name}, :c_id, {}, localtimestamp(0), 0.0, 0.0, 0.0, '', localtimestamp(0));\n",
                    ["''"; 18].join(", ")
                ),
                "SELECT payment(:w_id, :d_id, :c_w_id, :c_d_id, :c_id, :byname, :amount, '$8', '0', 0);\n".into(),
            ),
        );
        let delivery = self.script(
            "HammerDB delivery: the oldest new order of each of the ten districts",
            "\\set carrier random(1, 10)\n",
            pauses(2, 10),
            &pick(
                "CALL delivery(:w_id, :carrier, localtimestamp(0));\n".into(),
                "SELECT delivery(:w_id, :carrier);\n".into(),
            ),
        );
        let stock_level = self.script(
            "HammerDB stock level: the client's own district, threshold 10-20",
            "\\set threshold random(10, 20)\n",
            pauses(2, 5),
            &pick(
                "CALL slev(:w_id, :slev_district, :threshold, 0);\n".into(),
                "SELECT slev(:w_id, :slev_district, :threshold);\n".into(),
            ),
        );
        let order_status = self.script(
            "HammerDB order status: 60% by last name, else by id",
            &format!(
                "\\set d_id random(1, 10)\n{}\\set c_id random(1, 3000)\n{by_name}",
                if procs { nrnd } else { "" }
            ),
            pauses(2, 5),
            &pick(
                format!("CALL ostat(:w_id, :d_id, :c_id, :byname, {name}, '', '', 0.0, 0, localtimestamp(0), 0, '');\n"),
                format!("SELECT * FROM ostat(:w_id, :d_id, :c_id, :byname, '$5') AS ({OSTAT_COLUMNS});\n"),
            ),
        );
        // HammerDB's choice of 1-23: 10 new orders, 10 payments, one of each other.
        vec![
            script("tpcc-new-order", "new order", 10, new_order),
            script("tpcc-payment", "payment", 10, payment),
            script("tpcc-delivery", "delivery", 1, delivery),
            script("tpcc-stock-level", "stock level", 1, stock_level),
            script("tpcc-order-status", "order status", 1, order_status),
        ]
    }

    /// TPC-C by the text: NURand customers and names (C = 259 and 223 at run, 157 at
    /// load), real rollbacks of the 1% of new orders whose last item is unused (a
    /// script of their own: weight 10 of the new orders' 1,000).
    fn spec(&self) -> Vec<Script> {
        let new_order_draws = "\\set d_id random(1, 10)\n\
             \\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1\n\
             \\set ol_cnt random(5, 15)\n\\set seed random(0, 2147483647)\n";
        let customer = "\\set by_name random(1, 100) <= 60\n\
             \\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1\n\
             \\set last_no ((random(0, 255) | random(0, 999)) + 223) % 1000\n";
        let new_order = self.script(
            "TPC-C new order (2.4): district, customer by NURand(1023), 5-15 lines; the items, supply warehouses and quantities are drawn by the function from :seed",
            new_order_draws,
            pauses(18, 12),
            "SELECT tpcc_new_order(:w_id, :scale, :d_id, :c_id, :ol_cnt, false, :seed);\n",
        );
        let rollback = self.script(
            "TPC-C new order whose last item is unused (2.4.1.4): processed, then rolled back",
            new_order_draws,
            pauses(18, 12),
            "BEGIN;\nSELECT tpcc_new_order(:w_id, :scale, :d_id, :c_id, :ol_cnt, true, :seed);\nROLLBACK;\n",
        );
        let payment = self.script(
            "TPC-C payment (2.5): 15% for a customer of another warehouse, 60% by last name (NURand(255)), else by id (NURand(1023))",
            &format!(
                "\\set d_id random(1, 10)\n\\set c_w_id :w_id\n\\set c_d_id :d_id\n\
                 \\if random(1, 100) > 85\n\\set c_d_id random(1, 10)\n\
                 \\set c_w_id (:w_id + random(0, greatest(:scale - 2, 0))) % :scale + 1\n\\endif\n\
                 {customer}\\set amount random(100, 500000)\n"
            ),
            pauses(3, 12),
            "SELECT tpcc_payment(:w_id, :d_id, :c_w_id, :c_d_id, :c_id, :by_name, :last_no, :amount);\n",
        );
        let delivery = self.script(
            "TPC-C delivery (2.7): the oldest new order of each district",
            "\\set carrier random(1, 10)\n",
            pauses(2, 5),
            "SELECT tpcc_delivery(:w_id, :carrier);\n",
        );
        let stock_level = self.script(
            "TPC-C stock level (2.8): the client's own district (2.8.1.1), threshold 10-20",
            "\\set threshold random(10, 20)\n",
            pauses(2, 5),
            "SELECT tpcc_stock_level(:w_id, :slev_district, :threshold);\n",
        );
        let order_status = self.script(
            "TPC-C order status (2.6): 60% by last name, else by id",
            &format!("\\set d_id random(1, 10)\n{customer}"),
            pauses(2, 10),
            "SELECT tpcc_order_status(:w_id, :d_id, :c_id, :by_name, :last_no);\n",
        );
        vec![
            script("tpcc-new-order", "new order", 990, new_order),
            script(
                "tpcc-new-order-rollback",
                "new order (rolled back)",
                10,
                rollback,
            ),
            script("tpcc-payment", "payment", 1000, payment),
            script("tpcc-delivery", "delivery", 100, delivery),
            script("tpcc-stock-level", "stock level", 100, stock_level),
            script("tpcc-order-status", "order status", 100, order_status),
        ]
    }
}

fn script(name: &'static str, description: &'static str, weight: i64, text: String) -> Script {
    Script {
        name,
        description,
        weight,
        text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pgbench_results::QueryMode;

    fn ctx(clients: usize) -> ScriptContext {
        ScriptContext {
            query_mode: QueryMode::Prepared,
            clients,
            workers: 1,
        }
    }

    fn config(defines: &[(&str, &str)]) -> Config {
        let d: Vec<(String, String)> = defines
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect();
        Config::new(&d).unwrap()
    }

    #[test]
    fn every_script_parses_in_hammerdbs_proportions() {
        for defines in [&[][..], &[("storedprocs", "1")], &[("mode", "spec")]] {
            let c = config(defines);
            let s = scripts(&c, ctx(8));
            for script in &s {
                pgbench_script::parser::parse_script(script.name, script.description, &script.text)
                    .unwrap_or_else(|e| panic!("{}: {e:?}\n{}", script.name, script.text));
            }
            let w: Vec<i64> = s.iter().map(|s| s.weight).collect();
            let total: i64 = w.iter().sum();
            // Of 23: 10 new orders, 10 payments, one of each other.
            let new_orders: i64 = w[..w.len() - 4].iter().sum();
            assert_eq!(new_orders * 23, total * 10, "{defines:?}");
            let n = w.len();
            assert_eq!((w[n - 4] * 23, w[n - 1] * 23), (total * 10, total));
            assert_eq!(
                s.len(),
                PROFILE.iter().find(|p| p.0 == c.mode).unwrap().1.len()
            );
        }
    }

    #[test]
    fn hammerdbs_calls_pass_its_literal_names_and_procedures_the_real_ones() {
        let s = scripts(&config(&[]), ctx(8));
        assert!(s[0]
            .text
            .contains("SELECT neword(:w_id, :scale, :d_id, :c_id, :ol_cnt, 0);"));
        assert!(s[1].text.contains(":amount, '$8', '0', 0);"));
        assert!(s[4].text.contains(":byname, '$5') AS (ol_i_id integer,"));
        assert!(s[0].text.contains("\\set c_id random(1, 3000)"));
        let p = scripts(&config(&[("storedprocs", "1")]), ctx(8));
        assert!(p[1].text.contains("CALL payment(") && p[1].text.contains("[:nrnd % 10 + 1]"));
        assert!(p[1].text.contains("+ 123) % 1000"));
        // allwarehouse splits the warehouses among all the run's clients.
        let w = scripts(
            &config(&[]),
            ScriptContext {
                workers: 3,
                ..ctx(4)
            },
        );
        assert!(w[2]
            .text
            .contains("random(0, (:scale - 1) / 12) * 12) % :scale + 1"));
    }

    #[test]
    fn thinking_is_capped_at_ten_times_its_mean() {
        let s = scripts(&config(&[]), ctx(1));
        assert!(s[0]
            .text
            .contains("ln(random(1, 1000000) / 1000000.0)), 120000)"));
        assert!(s[0].text.contains("\\sleep :think_ms ms\n\\sleep 18 s\n"));
        // HammerDB's delivery thinks 10 s on average, TPC-C's 5 s.
        assert!(s[2].text.contains("-10000 * ln("));
        let spec = scripts(&config(&[("mode", "spec")]), ctx(1));
        assert!(spec[3].text.contains("-5000 * ln("));
    }
}
