//! HammerDB's PostgreSQL TPROC-C schema (`pgoltp.tcl`, `CreateTables`/`CreateIndexes`:
//! the nine tables with the same columns, types and key names, `order_line`
//! partitioned by warehouse under `-D partition=1` from 200 warehouses). HammerDB
//! creates the primary keys with the tables, so they are built during the load, and
//! its two secondary indexes after it; `-D mode=spec` builds all of them after the
//! load (faster). The routines are [`super::hammerdb_routines`] and
//! [`super::spec_functions`].

use super::Mode;

/// The tables, in the order they are created (dropped in reverse).
pub const TABLES: [&str; 9] = [
    "warehouse",
    "district",
    "customer",
    "history",
    "new_order",
    "orders",
    "order_line",
    "item",
    "stock",
];

/// `CREATE TABLE`s without keys.
const CREATE_TABLES: [&str; 9] = [
    "create table warehouse (w_id integer not null, w_name character varying(10) not null, \
     w_street_1 character varying(20) not null, w_street_2 character varying(20) not null, \
     w_city character varying(20) not null, w_state character(2) not null, w_zip character(9) not null, \
     w_tax numeric(4,4) not null, w_ytd numeric(16,2) not null)",
    "create table district (d_w_id integer not null, d_next_o_id integer not null, \
     d_id smallint not null, d_ytd numeric(12,2) not null, d_tax numeric(4,4) not null, \
     d_name character varying(10) not null, d_street_1 character varying(20) not null, \
     d_street_2 character varying(20) not null, d_city character varying(20) not null, \
     d_state character(2) not null, d_zip character(9) not null)",
    "create table customer (c_since timestamp with time zone not null, c_id integer not null, \
     c_w_id integer not null, c_d_id smallint not null, c_payment_cnt smallint not null, \
     c_delivery_cnt smallint not null, c_first character varying(16) not null, \
     c_middle character(2) not null, c_last character varying(16) not null, \
     c_street_1 character varying(20) not null, c_street_2 character varying(20) not null, \
     c_city character varying(20) not null, c_state character(2) not null, c_zip character(9) not null, \
     c_phone character(16) not null, c_credit character(2) not null, c_credit_lim numeric(12,2) not null, \
     c_discount numeric(4,4) not null, c_balance numeric(12,2) not null, \
     c_ytd_payment numeric(12,2) not null, c_data character varying(500) not null)",
    "create table history (h_date timestamp with time zone not null, h_c_id integer, \
     h_c_w_id integer not null, h_w_id integer not null, h_c_d_id smallint not null, \
     h_d_id smallint not null, h_amount numeric(6,2) not null, h_data character varying(24) not null)",
    "create table new_order (no_w_id integer not null, no_o_id integer not null, no_d_id smallint not null)",
    "create table orders (o_entry_d timestamp with time zone not null, o_id integer not null, \
     o_w_id integer not null, o_c_id integer not null, o_d_id smallint not null, o_carrier_id smallint, \
     o_ol_cnt smallint not null, o_all_local smallint not null)",
    "create table order_line (ol_delivery_d timestamp with time zone, ol_o_id integer not null, \
     ol_w_id integer not null, ol_i_id integer not null, ol_supply_w_id integer not null, \
     ol_d_id smallint not null, ol_number smallint not null, ol_quantity smallint not null, \
     ol_amount numeric(6,2), ol_dist_info character(24))",
    "create table item (i_id integer not null, i_im_id integer not null, i_name character varying(24) not null, \
     i_price numeric(5,2) not null, i_data character varying(50) not null)",
    "create table stock (s_i_id integer not null, s_w_id integer not null, s_ytd integer not null, \
     s_quantity smallint not null, s_order_cnt smallint not null, s_remote_cnt smallint not null, \
     s_dist_01 character(24) not null, s_dist_02 character(24) not null, s_dist_03 character(24) not null, \
     s_dist_04 character(24) not null, s_dist_05 character(24) not null, s_dist_06 character(24) not null, \
     s_dist_07 character(24) not null, s_dist_08 character(24) not null, s_dist_09 character(24) not null, \
     s_dist_10 character(24) not null, s_data character varying(50) not null)",
];

/// HammerDB's primary keys (its `CONSTRAINT ..._I1`), by table in [`TABLES`] order
/// (`history` has none).
const PRIMARY_KEYS: [Option<(&str, &str)>; 9] = [
    Some(("warehouse_i1", "w_id")),
    Some(("district_i1", "d_w_id, d_id")),
    Some(("customer_i1", "c_w_id, c_d_id, c_id")),
    None,
    Some(("new_order_i1", "no_w_id, no_d_id, no_o_id")),
    Some(("orders_i1", "o_w_id, o_d_id, o_id")),
    Some(("order_line_i1", "ol_w_id, ol_d_id, ol_o_id, ol_number")),
    Some(("item_i1", "i_id")),
    Some(("stock_i1", "s_i_id, s_w_id")),
];

/// HammerDB's two secondary indexes (`CreateIndexes`).
const INDEXES: [&str; 2] = [
    "create unique index customer_i2 on customer using btree (c_w_id, c_d_id, c_last, c_first, c_id)",
    "create unique index orders_i2 on orders using btree (o_w_id, o_d_id, o_c_id, o_id)",
];

/// The names of the keys' and indexes' indexes, in their order (what `--check` looks
/// for).
pub const KEY_NAMES: [&str; 10] = [
    "warehouse_i1",
    "district_i1",
    "customer_i1",
    "new_order_i1",
    "orders_i1",
    "order_line_i1",
    "item_i1",
    "stock_i1",
    "customer_i2",
    "orders_i2",
];

/// `order_line`'s hash partitions by warehouse under `-D partition=1`: HammerDB's
/// `round(W/100)` from 200 warehouses, none below.
pub fn order_line_partitions(partition: bool, warehouses: i32) -> i32 {
    if partition && warehouses >= 200 {
        warehouses / 100
    } else {
        0
    }
}

/// The statements that create the tables: with their primary keys in mode
/// `hammerdb`, without in mode `spec`, and `order_line` in `partitions` partitions.
pub fn create_tables(mode: Mode, partitions: i32) -> Vec<String> {
    let mut out: Vec<String> = CREATE_TABLES
        .iter()
        .zip(PRIMARY_KEYS)
        .map(|(sql, key)| {
            let mut sql = sql.to_string();
            if let (Mode::Hammerdb, Some((name, columns))) = (mode, key) {
                sql.pop();
                sql.push_str(&format!(", constraint {name} primary key ({columns}))"));
            }
            if partitions > 0 && sql.starts_with("create table order_line ") {
                sql.push_str(" partition by hash (ol_w_id)");
            }
            sql
        })
        .collect();
    out.extend((0..partitions).map(|i| {
        format!(
            "create table ol_{i} partition of order_line for values with (modulus {partitions}, remainder {i})"
        )
    }));
    out
}

/// The keys and indexes built after the load, one statement per table so that `-j`
/// builds them at once: HammerDB's two indexes, or in mode `spec` the primary keys too.
pub fn keys_after_load(mode: Mode) -> Vec<String> {
    let primary = TABLES.iter().zip(PRIMARY_KEYS).filter_map(|(table, key)| {
        let (name, columns) = key?;
        Some(format!(
            "alter table {table} add constraint {name} primary key ({columns})"
        ))
    });
    let primary: Vec<String> = match mode {
        Mode::Spec => primary.collect(),
        Mode::Hammerdb => Vec::new(),
    };
    primary
        .into_iter()
        .chain(INDEXES.iter().map(|s| s.to_string()))
        .collect()
}

/// The COPY statements of the load, in [`TABLES`] order (text format).
pub const COPY: [&str; 9] = [
    "copy warehouse (w_id, w_name, w_street_1, w_street_2, w_city, w_state, w_zip, w_tax, w_ytd) from stdin",
    "copy district (d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, d_ytd, d_next_o_id) from stdin",
    "copy customer (c_id, c_d_id, c_w_id, c_first, c_middle, c_last, c_street_1, c_street_2, c_city, \
     c_state, c_zip, c_phone, c_since, c_credit, c_credit_lim, c_discount, c_balance, c_ytd_payment, \
     c_payment_cnt, c_delivery_cnt, c_data) from stdin",
    "copy history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data) from stdin",
    "copy new_order (no_o_id, no_d_id, no_w_id) from stdin",
    "copy orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local) from stdin",
    "copy order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id, ol_delivery_d, \
     ol_quantity, ol_amount, ol_dist_info) from stdin",
    "copy item (i_id, i_im_id, i_name, i_price, i_data) from stdin",
    "copy stock (s_i_id, s_w_id, s_quantity, s_dist_01, s_dist_02, s_dist_03, s_dist_04, s_dist_05, \
     s_dist_06, s_dist_07, s_dist_08, s_dist_09, s_dist_10, s_ytd, s_order_cnt, s_remote_cnt, s_data) from stdin",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hammerdb_creates_the_keys_with_the_tables_and_partitions_from_200_warehouses() {
        let tables = create_tables(Mode::Hammerdb, order_line_partitions(true, 4));
        assert_eq!(tables.len(), 9);
        assert!(tables[0].ends_with(", constraint warehouse_i1 primary key (w_id))"));
        assert!(!tables[3].contains("primary key"), "history has none");
        assert_eq!(keys_after_load(Mode::Hammerdb).len(), 2);
        let spec = create_tables(Mode::Spec, 0);
        assert!(spec.iter().all(|t| !t.contains("primary key")));
        assert_eq!(keys_after_load(Mode::Spec).len(), 10);
        assert_eq!(order_line_partitions(false, 500), 0);
        assert_eq!(order_line_partitions(true, 199), 0);
        let parted = create_tables(Mode::Hammerdb, order_line_partitions(true, 250));
        assert_eq!(parted.len(), 11);
        assert!(parted[6].ends_with(
            " primary key (ol_w_id, ol_d_id, ol_o_id, ol_number)) partition by hash (ol_w_id)"
        ));
        assert_eq!(
            parted[10],
            "create table ol_1 partition of order_line for values with (modulus 2, remainder 1)"
        );
    }

    #[test]
    fn the_names_check_looks_for_are_those_created() {
        for mode in [Mode::Hammerdb, Mode::Spec] {
            let all = create_tables(mode, 0).join(" ") + &keys_after_load(mode).join(" ");
            for name in KEY_NAMES {
                assert!(all.contains(&format!(" {name} ")), "{mode:?}: {name}");
            }
        }
    }
}
