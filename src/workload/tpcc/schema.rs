//! HammerDB's PostgreSQL TPROC-C schema (`pgoltp.tcl`, `CreateTables`/`CreateIndexes`:
//! the nine tables with the same columns, types and key names) and this workload's
//! own PL/pgSQL functions for the five transactions. The functions take every value
//! the client drew as arguments; what they draw themselves (items, quantities, supply
//! warehouses) comes from `setseed` with a seed the client drew, so a seeded run is
//! reproduced exactly.

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

/// `CREATE TABLE`s without keys: the keys and indexes are built after the load.
pub const CREATE_TABLES: [&str; 9] = [
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

/// HammerDB's keys (named as its `CONSTRAINT ..._I1`) and its two secondary indexes;
/// one statement per table, so `-j` builds them concurrently.
pub const KEYS: [&str; 10] = [
    "alter table warehouse add constraint warehouse_i1 primary key (w_id)",
    "alter table district add constraint district_i1 primary key (d_w_id, d_id)",
    "alter table customer add constraint customer_i1 primary key (c_w_id, c_d_id, c_id)",
    "alter table new_order add constraint new_order_i1 primary key (no_w_id, no_d_id, no_o_id)",
    "alter table orders add constraint orders_i1 primary key (o_w_id, o_d_id, o_id)",
    "alter table order_line add constraint order_line_i1 primary key (ol_w_id, ol_d_id, ol_o_id, ol_number)",
    "alter table item add constraint item_i1 primary key (i_id)",
    "alter table stock add constraint stock_i1 primary key (s_i_id, s_w_id)",
    "create unique index customer_i2 on customer using btree (c_w_id, c_d_id, c_last, c_first, c_id)",
    "create unique index orders_i2 on orders using btree (o_w_id, o_d_id, o_c_id, o_id)",
];

/// The names of [`KEYS`]' indexes, in their order (what `--check` looks for).
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

/// The functions [`FUNCTIONS`] creates (what `--check` looks for).
pub const FUNCTION_NAMES: [&str; 8] = [
    "tpcc_last_name",
    "tpcc_random",
    "tpcc_customer_by_name",
    "tpcc_new_order",
    "tpcc_payment",
    "tpcc_order_status",
    "tpcc_delivery",
    "tpcc_stock_level",
];

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

/// The functions the five transactions call. NURand's run-time constants (TPC-C
/// 2.1.6) are fixed here: C for items 7911, for customer ids 259 (drawn by the
/// client), for last names 223 (the load uses 157: a difference of 66, inside the
/// 65..119 that clause 2.1.6.1 asks for).
pub const FUNCTIONS: &str = r#"
create or replace function tpcc_last_name(n integer) returns varchar
language sql immutable as $$
  select (array['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n / 100 % 10 + 1]
      || (array['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n / 10 % 10 + 1]
      || (array['BAR','OUGHT','ABLE','PRI','PRES','ESE','ANTI','CALLY','ATION','EING'])[n % 10 + 1]
$$;

-- A uniform integer in [lo, hi] from the session's seeded generator.
create or replace function tpcc_random(lo integer, hi integer) returns integer
language sql volatile as $$ select lo + floor(random() * (hi - lo + 1))::integer $$;

-- The customer at position ceil(n/2) of those with that last name, by first name
-- (clause 2.5.2.2).
create or replace function tpcc_customer_by_name(w integer, d integer, last_no integer)
returns integer language sql stable as $$
  select c_id from customer
   where c_w_id = w and c_d_id = d and c_last = tpcc_last_name(last_no)
   order by c_first
  offset (select (count(*) - 1) / 2 from customer
           where c_w_id = w and c_d_id = d and c_last = tpcc_last_name(last_no))
   limit 1
$$;

-- New order (clause 2.4). Returns the order's id, or -1 when the last item is the
-- unused one (rollback: the caller rolls the transaction back).
create or replace function tpcc_new_order(w integer, max_w integer, d integer, c integer,
    ol_cnt integer, roll_back boolean, seed integer) returns integer
language plpgsql as $$
declare
  items integer[]; supply integer[]; qty integer[];
  all_local smallint := 1; k integer;
  disc numeric; wtax numeric; dtax numeric; o integer;
  price numeric; dist character(24);
begin
  perform setseed(seed / 2147483647.0);
  for k in 1 .. ol_cnt loop
    items[k] := ((tpcc_random(0, 8191) | tpcc_random(1, 100000)) + 7911) % 100000 + 1;
    supply[k] := w;
    if max_w > 1 and tpcc_random(1, 100) = 1 then
      supply[k] := (w + tpcc_random(0, max_w - 2)) % max_w + 1;
      all_local := 0;
    end if;
    qty[k] := tpcc_random(1, 10);
  end loop;
  if roll_back then
    items[ol_cnt] := 100001;
  end if;
  select c_discount into disc from customer where c_w_id = w and c_d_id = d and c_id = c;
  select warehouse.w_tax into wtax from warehouse where w_id = w;
  update district set d_next_o_id = d_next_o_id + 1 where d_w_id = w and d_id = d
    returning d_next_o_id - 1, district.d_tax into o, dtax;
  insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_carrier_id, o_ol_cnt, o_all_local)
    values (o, d, w, c, current_timestamp, null, ol_cnt, all_local);
  insert into new_order (no_o_id, no_d_id, no_w_id) values (o, d, w);
  -- Stock rows in one order (warehouse, item) whatever the lines' order: concurrent
  -- new orders then never wait on each other in a cycle.
  for k in select i from generate_subscripts(items, 1) i order by supply[i], items[i], i loop
    select i_price into price from item where i_id = items[k];
    if not found then
      return -1;
    end if;
    update stock set
        s_quantity = case when s_quantity >= qty[k] + 10 then s_quantity - qty[k]
                          else s_quantity - qty[k] + 91 end,
        s_ytd = s_ytd + qty[k], s_order_cnt = s_order_cnt + 1,
        s_remote_cnt = s_remote_cnt + (supply[k] <> w)::integer
      where s_i_id = items[k] and s_w_id = supply[k]
      returning case d when 1 then s_dist_01 when 2 then s_dist_02 when 3 then s_dist_03
        when 4 then s_dist_04 when 5 then s_dist_05 when 6 then s_dist_06 when 7 then s_dist_07
        when 8 then s_dist_08 when 9 then s_dist_09 else s_dist_10 end into dist;
    insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
        ol_delivery_d, ol_quantity, ol_amount, ol_dist_info)
      values (o, d, w, k, items[k], supply[k], null, qty[k],
              qty[k] * price * (1 + wtax + dtax) * (1 - disc), dist);
  end loop;
  return o;
end $$;

-- Payment (clause 2.5): by last name when by_name, else by id.
create or replace function tpcc_payment(w integer, d integer, c_w integer, c_d integer,
    c integer, by_name boolean, last_no integer, amount_cents integer) returns integer
language plpgsql as $$
declare
  amount numeric := amount_cents / 100.0; wname varchar; dname varchar;
begin
  update warehouse set w_ytd = w_ytd + amount where w_id = w returning warehouse.w_name into wname;
  update district set d_ytd = d_ytd + amount where d_w_id = w and d_id = d
    returning district.d_name into dname;
  if by_name then
    c := tpcc_customer_by_name(c_w, c_d, last_no);
  end if;
  update customer set
      c_balance = c_balance - amount, c_ytd_payment = c_ytd_payment + amount,
      c_payment_cnt = c_payment_cnt + 1,
      c_data = case when c_credit = 'BC'
                    then substr(format('%s %s %s %s %s %s | ', c, c_d, c_w, d, w, amount) || c_data, 1, 500)
                    else c_data end
    where c_w_id = c_w and c_d_id = c_d and c_id = c;
  insert into history (h_c_id, h_c_d_id, h_c_w_id, h_d_id, h_w_id, h_date, h_amount, h_data)
    values (c, c_d, c_w, d, w, current_timestamp, amount, wname || '    ' || dname);
  return c;
end $$;

-- Order status (clause 2.6): the customer's last order and its lines; returns the
-- number of lines.
create or replace function tpcc_order_status(w integer, d integer, c integer,
    by_name boolean, last_no integer) returns integer
language plpgsql as $$
declare
  balance numeric; o integer; lines integer;
begin
  if by_name then
    c := tpcc_customer_by_name(w, d, last_no);
  end if;
  select c_balance into balance from customer where c_w_id = w and c_d_id = d and c_id = c;
  select o_id into o from orders where o_w_id = w and o_d_id = d and o_c_id = c
    order by o_id desc limit 1;
  select count(*) into lines from (
    select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d from order_line
     where ol_w_id = w and ol_d_id = d and ol_o_id = o) l;
  return lines;
end $$;

-- Delivery (clause 2.7), all ten districts in one transaction; returns the orders
-- delivered (a district with none waiting, or whose oldest a concurrent delivery
-- took, is skipped).
create or replace function tpcc_delivery(w integer, carrier integer) returns integer
language plpgsql as $$
declare
  d integer; o integer; c integer; total numeric; delivered integer := 0;
begin
  for d in 1 .. 10 loop
    select no_o_id into o from new_order where no_w_id = w and no_d_id = d
      order by no_o_id limit 1 for update;
    continue when not found;
    delete from new_order where no_w_id = w and no_d_id = d and no_o_id = o;
    update orders set o_carrier_id = carrier where o_w_id = w and o_d_id = d and o_id = o
      returning o_c_id into c;
    update order_line set ol_delivery_d = current_timestamp
      where ol_w_id = w and ol_d_id = d and ol_o_id = o;
    select sum(ol_amount) into total from order_line
      where ol_w_id = w and ol_d_id = d and ol_o_id = o;
    update customer set c_balance = c_balance + total, c_delivery_cnt = c_delivery_cnt + 1
      where c_w_id = w and c_d_id = d and c_id = c;
    delivered := delivered + 1;
  end loop;
  return delivered;
end $$;

-- Stock level (clause 2.8): distinct items of the district's last 20 orders whose
-- stock is below the threshold.
create or replace function tpcc_stock_level(w integer, d integer, threshold integer)
returns integer language sql stable as $$
  select count(distinct s_i_id)::integer
    from district, order_line, stock
   where d_w_id = w and d_id = d
     and ol_w_id = w and ol_d_id = d
     and ol_o_id < d_next_o_id and ol_o_id >= d_next_o_id - 20
     and s_w_id = w and s_i_id = ol_i_id and s_quantity < threshold
$$;
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_names_check_looks_for_are_those_created() {
        for (sql, name) in KEYS.iter().zip(KEY_NAMES) {
            assert!(
                sql.contains(&format!(" {name} ")),
                "{sql} does not create {name}"
            );
        }
        let created: Vec<&str> = FUNCTIONS
            .split("create or replace function ")
            .skip(1)
            .map(|f| f.split('(').next().unwrap())
            .collect();
        assert_eq!(created, FUNCTION_NAMES);
    }
}
