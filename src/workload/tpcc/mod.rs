//! TPC-C as HammerDB's timed driver runs it on PostgreSQL (`pgoltp.tcl`): the five
//! transactions in HammerDB's proportions (of every 23: 10 new orders, 10 payments,
//! one delivery, one stock level, one order status), each a pgbench script that draws
//! its parameters with pgbench expressions from the client's seeded generator and
//! calls this workload's function for it ([`schema::FUNCTIONS`]). The 1% of new orders
//! that TPC-C rolls back (clause 2.4.1.4) are a script of their own (weight 10 of the
//! new orders' 1,000) that rolls its transaction back, so the new orders committed
//! are that script's transactions.
//!
//! Init (`-i --workload=tpcc -s W`) is [`init`], which marks a load complete at its
//! end ([`marker`]: a run refuses any other); the result line and time profile after
//! the report are [`monitor`] and `pgbench_results::tpcc`; `--check` is [`check`].

pub mod check;
pub mod init;
pub mod marker;
pub mod monitor;
pub mod rows;
pub mod run;
pub mod schema;

use super::{WorkloadError, WorkloadScript};

/// Its `--workload` name.
pub const NAME: &str = "tpcc";

/// HammerDB's options that change results, as `-D` variables with HammerDB's defaults:
/// `allwarehouse` (HammerDB's "Use All Warehouses": each transaction picks any
/// warehouse; off: each client keeps its home warehouse, client_id % W + 1) and
/// `keyandthink` (HammerDB's "Keying and Thinking Time": clause 5.2.5's keying and
/// thinking times, slept inside the transaction's script).
pub const DEFINES: &[(&str, &str)] = &[("allwarehouse", "0"), ("keyandthink", "0")];

/// The `-D` options, each 0 or 1.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    pub allwarehouse: bool,
    pub keyandthink: bool,
}

impl Config {
    /// From `-D` (every one must be of [`DEFINES`], 0 or 1; later ones win).
    pub fn new(defines: &[(String, String)]) -> Result<Config, WorkloadError> {
        let mut c = Config {
            allwarehouse: false,
            keyandthink: false,
        };
        for (name, value) in defines {
            if !DEFINES.iter().any(|(n, _)| n == name) {
                let known: Vec<&str> = DEFINES.iter().map(|(n, _)| *n).collect();
                return Err(WorkloadError::UnknownOption {
                    workload: NAME,
                    name: name.clone(),
                    known: known.join(", "),
                });
            }
            let on = match value.as_str() {
                "0" | "false" | "off" => false,
                "1" | "true" | "on" => true,
                _ => {
                    return Err(WorkloadError::InvalidValue {
                        workload: NAME,
                        name: name.clone(),
                        value: value.clone(),
                        why: "expecting 0 or 1".into(),
                    })
                }
            };
            match name.as_str() {
                "allwarehouse" => c.allwarehouse = on,
                _ => c.keyandthink = on,
            }
        }
        Ok(c)
    }

    /// The scripts' variables (as 0 or 1).
    pub fn variables(&self) -> Vec<(String, String)> {
        let bit = |b: bool| if b { "1" } else { "0" }.to_string();
        vec![
            ("allwarehouse".into(), bit(self.allwarehouse)),
            ("keyandthink".into(), bit(self.keyandthink)),
        ]
    }
}

/// Each script's transaction in HammerDB's time profile.
pub const PROFILE_NAMES: [&str; 6] = ["neword", "neword", "payment", "delivery", "slev", "ostat"];

/// The scripts: (name, description, weight, text).
const SCRIPTS: [(&str, &str, i64, &str); 6] = [
    ("tpcc-new-order", "new order", 990, NEW_ORDER),
    (
        "tpcc-new-order-rollback",
        "new order (rolled back)",
        10,
        NEW_ORDER_ROLLBACK,
    ),
    ("tpcc-payment", "payment", 1000, PAYMENT),
    ("tpcc-delivery", "delivery", 100, DELIVERY),
    ("tpcc-stock-level", "stock level", 100, STOCK_LEVEL),
    ("tpcc-order-status", "order status", 100, ORDER_STATUS),
];

/// The index in [`scripts`] of the new orders that commit.
pub const NEW_ORDER_SCRIPT: usize = 0;

/// A transaction's script: the client's warehouse (its home one, 2.4.1.1, or any
/// with `allwarehouse`), its draws, keying time, SQL, thinking time.
macro_rules! tx {
    ($comment:literal, $draws:expr, $keying:literal, $sql:literal, $thinking:literal) => {
        concat!(
            "-- ", $comment, "\n",
            "\\if :allwarehouse\n\\set w_id random(1, :scale)\n\\else\n\\set w_id :client_id % :scale + 1\n\\endif\n",
            $draws,
            "\\if :keyandthink\n\\sleep ", $keying, " s\n\\endif\n",
            $sql,
            "\\if :keyandthink\n\\set think int(-", $thinking,
            " * ln(random(1, 1000000) / 1000000.0))\n\\sleep :think ms\n\\endif\n"
        )
    };
}

/// What both new-order scripts draw.
macro_rules! new_order_draws {
    () => {
        "\\set d_id random(1, 10)
\\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\\set ol_cnt random(5, 15)
\\set seed random(0, 2147483647)
"
    };
}

const NEW_ORDER: &str = tx!(
    "TPC-C new order (2.4): district, customer by NURand(1023), 5-15 lines; the items, supply warehouses and quantities are drawn by the function from :seed",
    new_order_draws!(),
    "18",
    "SELECT tpcc_new_order(:w_id, :scale, :d_id, :c_id, :ol_cnt, false, :seed);\n",
    "12000"
);

const NEW_ORDER_ROLLBACK: &str = tx!(
    "TPC-C new order whose last item is unused (2.4.1.4): processed, then rolled back",
    new_order_draws!(),
    "18",
    "BEGIN;
SELECT tpcc_new_order(:w_id, :scale, :d_id, :c_id, :ol_cnt, true, :seed);
ROLLBACK;
",
    "12000"
);

const PAYMENT: &str = tx!(
    "TPC-C payment (2.5): 15% for a customer of another warehouse, 60% by last name (NURand(255)), else by id (NURand(1023))",
    "\\set d_id random(1, 10)
\\set c_w_id :w_id
\\set c_d_id :d_id
\\if random(1, 100) > 85
\\set c_d_id random(1, 10)
\\set c_w_id (:w_id + random(0, greatest(:scale - 2, 0))) % :scale + 1
\\endif
\\set by_name random(1, 100) <= 60
\\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\\set last_no ((random(0, 255) | random(0, 999)) + 223) % 1000
\\set amount random(100, 500000)
",
    "3",
    "SELECT tpcc_payment(:w_id, :d_id, :c_w_id, :c_d_id, :c_id, :by_name, :last_no, :amount);\n",
    "12000"
);

const ORDER_STATUS: &str = tx!(
    "TPC-C order status (2.6): 60% by last name, else by id",
    "\\set d_id random(1, 10)
\\set by_name random(1, 100) <= 60
\\set c_id ((random(0, 1023) | random(1, 3000)) + 259) % 3000 + 1
\\set last_no ((random(0, 255) | random(0, 999)) + 223) % 1000
",
    "2",
    "SELECT tpcc_order_status(:w_id, :d_id, :c_id, :by_name, :last_no);\n",
    "5000"
);

const DELIVERY: &str = tx!(
    "TPC-C delivery (2.7): the oldest new order of each district",
    "\\set carrier random(1, 10)
",
    "2",
    "SELECT tpcc_delivery(:w_id, :carrier);\n",
    "5000"
);

const STOCK_LEVEL: &str = tx!(
    "TPC-C stock level (2.8): the client's own district (2.8.1.1), threshold 10-20",
    "\\set d_id :client_id % 10 + 1
\\set threshold random(10, 20)
",
    "2",
    "SELECT tpcc_stock_level(:w_id, :d_id, :threshold);\n",
    "5000"
);

/// The scripts with their weights.
pub fn scripts() -> Vec<WorkloadScript> {
    SCRIPTS
        .iter()
        .map(|(name, desc, weight, text)| WorkloadScript {
            name: name.to_string(),
            description: format!("<workload tpcc: {desc}>"),
            text: text.to_string(),
            weight: *weight,
        })
        .collect()
}

/// `--show-script=tpcc`: every script, with its weight.
pub fn show_scripts() -> String {
    SCRIPTS
        .iter()
        .map(|(n, desc, weight, text)| {
            format!("-- {n}: <workload tpcc: {desc}>, weight {weight}\n{text}\n")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scripts_parse_in_hammerdbs_proportions() {
        let s = scripts();
        for script in &s {
            pgbench_script::parser::parse_script(&script.name, &script.description, &script.text)
                .unwrap();
        }
        let w: Vec<i64> = s.iter().map(|s| s.weight).collect();
        assert_eq!(w.iter().sum::<i64>(), 2300);
        // HammerDB: of 23, 10 new orders, 10 payments, one each of the others.
        assert_eq!(
            (w[0] + w[1], w[2], w[3], w[4], w[5]),
            (1000, 1000, 100, 100, 100)
        );
        assert!(show_scripts().contains("tpcc_delivery"));
    }

    #[test]
    fn the_options_are_hammerdbs_and_nothing_else() {
        let d = |n: &str, v: &str| vec![(n.to_string(), v.to_string())];
        assert!(Config::new(&d("allwarehouse", "1")).unwrap().allwarehouse);
        assert!(Config::new(&d("keyandthink", "2")).is_err());
        assert!(Config::new(&d("warehouses", "1")).is_err());
    }
}
