//! `--workload=tpcc --check`: TPC-C's consistency conditions 1-4 (clause 3.3.2) on
//! the database, each a query that returns the rows that break it.

use pgbench_wire::Connection;

/// (condition, what it says, a query returning the keys that break it).
pub const CONDITIONS: [(u32, &str, &str); 4] = [
    (
        1,
        "W_YTD = sum(D_YTD) for each warehouse",
        "select w_id from warehouse join (select d_w_id, sum(d_ytd) s from district group by d_w_id) d \
         on d_w_id = w_id where w_ytd <> s",
    ),
    (
        2,
        "D_NEXT_O_ID - 1 = max(O_ID) = max(NO_O_ID) for each district",
        "select d_w_id, d_id from district \
         left join (select o_w_id, o_d_id, max(o_id) m from orders group by 1, 2) o \
           on o_w_id = d_w_id and o_d_id = d_id \
         left join (select no_w_id, no_d_id, max(no_o_id) m from new_order group by 1, 2) n \
           on no_w_id = d_w_id and no_d_id = d_id \
         where d_next_o_id - 1 is distinct from o.m \
            or (n.m is not null and d_next_o_id - 1 <> n.m)",
    ),
    (
        3,
        "max(NO_O_ID) - min(NO_O_ID) + 1 = the rows of NEW_ORDER for each district",
        "select no_w_id, no_d_id from new_order group by 1, 2 \
         having max(no_o_id) - min(no_o_id) + 1 <> count(*)",
    ),
    (
        4,
        "sum(O_OL_CNT) = the rows of ORDER_LINE for each district",
        "select o_w_id, o_d_id from (select o_w_id, o_d_id, sum(o_ol_cnt) s from orders group by 1, 2) o \
         full join (select ol_w_id, ol_d_id, count(*) n from order_line group by 1, 2) l \
           on ol_w_id = o_w_id and ol_d_id = o_d_id \
         where s is distinct from n",
    ),
];

/// Runs the four checks; the report (a line per condition) and whether all hold.
pub fn check(conn: &mut Connection) -> Result<(String, bool), String> {
    let mut out = String::new();
    let mut all = true;
    for (n, what, sql) in CONDITIONS {
        let rows = conn
            .query_rows(&format!("{sql} limit 5"))
            .map_err(|e| format!("consistency condition {n} could not be checked: {e}"))?;
        if rows.is_empty() {
            out.push_str(&format!("consistency condition {n} holds: {what}\n"));
        } else {
            all = false;
            let keys: Vec<String> = rows
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|v| v.clone().unwrap_or_default())
                        .collect::<Vec<_>>()
                        .join("/")
                })
                .collect();
            out.push_str(&format!(
                "consistency condition {n} FAILS: {what}; broken for {}\n",
                keys.join(", ")
            ));
        }
    }
    Ok((out, all))
}
