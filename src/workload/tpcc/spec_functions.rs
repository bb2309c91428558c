//! The functions of `-D mode=spec`, TPC-C by the text: clause 2's five transactions
//! row by row, with real last-name lookups and the full column updates. They take
//! every value the client drew as arguments; what they draw themselves (items,
//! quantities, supply warehouses) comes from `setseed` with a seed the client drew, so
//! a seeded run is reproduced exactly.

/// The functions [`FUNCTIONS`] creates (what `--check` looks for).
pub const NAMES: [&str; 8] = [
    "tpcc_last_name",
    "tpcc_random",
    "tpcc_customer_by_name",
    "tpcc_new_order",
    "tpcc_payment",
    "tpcc_order_status",
    "tpcc_delivery",
    "tpcc_stock_level",
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
        let created: Vec<&str> = FUNCTIONS
            .split("create or replace function ")
            .skip(1)
            .map(|f| f.split('(').next().unwrap())
            .collect();
        assert_eq!(created, NAMES);
    }
}
