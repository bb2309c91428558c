//! The server-side routines of `-D mode=hammerdb`: HammerDB 4.12's TPROC-C functions
//! for PostgreSQL (`CreateStoredProcs` in pgoltp.tcl) reproduced in what they do, not
//! copied: the same names and argument types, and in each the same statements, so the
//! server does the same work per transaction. They are set-based: the new order is 7
//! statements (an `UPDATE stock ... FROM unnest(...)` for all its lines and an
//! `INSERT ... SELECT FROM unnest(...)` of its order lines), the delivery 4 for all ten
//! districts, the payment 5 or 6, the order status 3 or 4, the stock level 1. Each has
//! an exception block (a subtransaction per call, as HammerDB's; the error is raised
//! on to the client). `-D storedprocs=1` makes them PROCEDUREs with HammerDB's INOUT
//! arguments instead, called with CALL; their bodies are the functions'.
//!
//! What HammerDB's routines do that TPC-C does not, kept because HammerDB's figures
//! contain it: the "rolled back" 1% of new orders commit with a line for item 100001;
//! a line's amount is `quantity + price * (1 + taxes) * (1 - discount)`, and the
//! amounts and district info are matched to the lines in the order the stock update
//! returns them; the stock update sets only `s_quantity`; the payment sets the
//! balance from the one passed in when it finds no customer by name, and updates
//! neither `c_ytd_payment` nor `c_payment_cnt`; the delivery does not count
//! `c_delivery_cnt`; by name, the payment takes the customer at half the count rounded
//! down (none for one) and the order status the one at half the count rounded up to
//! even, plus one (none for one).

/// The routines [`create`] creates, functions or procedures (what `--check` looks
/// for).
pub const NAMES: [&str; 6] = [
    "dbms_random",
    "neword",
    "delivery",
    "payment",
    "ostat",
    "slev",
];

/// Every routine this workload may have created, in either mode: dropped before the
/// mode's own are created, so the database holds one mode's routines.
pub const DROP_ROUTINES: &str = "do $$ declare r regprocedure; begin
  for r in select p.oid::regprocedure from pg_proc p join pg_namespace n on n.oid = p.pronamespace
            where n.nspname = current_schema()
              and p.proname = any (array['dbms_random', 'neword', 'payment', 'delivery', 'ostat',
                  'slev', 'tpcc_last_name', 'tpcc_random', 'tpcc_customer_by_name',
                  'tpcc_new_order', 'tpcc_payment', 'tpcc_order_status', 'tpcc_delivery',
                  'tpcc_stock_level'])
  loop
    execute format('drop routine %s cascade', r);
  end loop;
end $$";

/// HammerDB's DBMS_RANDOM: a uniform integer in [lo, hi] from the session's random()
/// (a PL/pgSQL function, as HammerDB's: its cost is part of each new order's).
const DBMS_RANDOM: &str = "create function dbms_random(integer, integer) returns integer
language plpgsql strict as $$
begin
  return $1 + floor(random() * ($2 - $1 + 1))::integer;
end $$";

/// How the routines end: re-raising what HammerDB's handler catches.
const HANDLER: &str = "exception
  when serialization_failure or deadlock_detected or no_data_found then raise;";

/// The new order's locals beyond its arguments, and its statements.
const NEW_ORDER_LOCALS: &str = "
  local_only smallint := 1; unused smallint;
  items integer[]; suppliers integer[]; quantities smallint[]; numbers smallint[];
  prices numeric(5,2)[]; infos char(24)[]; left_in_stock smallint[]; amounts numeric(5,2)[];
  total numeric := 0;";

const NEW_ORDER_BODY: &str = "
  select c_discount, c_last, c_credit, w_tax into discount, cust_last, cust_credit, tax_w
    from customer, warehouse
   where w_id = wh and c_w_id = wh and c_d_id = dist and c_id = cust;
  -- TPC-C 2.4.1.4's 1% whose last item is unused; HammerDB commits them all the same.
  unused := round(dbms_random(1, 100));
  for k in 1 .. line_count loop
    items[k] := case when k = line_count and unused = 1 then 100001
                     else round(dbms_random(1, 100000)) end;
    if round(dbms_random(1, 100)) > 1 then
      suppliers[k] := wh;
    else
      local_only := 0;
      suppliers[k] := 1 + mod(wh + round(dbms_random(0, max_wh - 1))::integer, max_wh);
    end if;
    quantities[k] := round(dbms_random(1, 10));
    numbers[k] := k;
  end loop;
  update district set d_next_o_id = d_next_o_id + 1
   where d_id = dist and d_w_id = wh
  returning d_next_o_id - 1, d_tax into next_order, tax_d;
  insert into orders (o_id, o_d_id, o_w_id, o_c_id, o_entry_d, o_ol_cnt, o_all_local)
  values (next_order, dist, wh, cust, current_timestamp, line_count, local_only);
  insert into new_order (no_o_id, no_d_id, no_w_id) values (next_order, dist, wh);
  select array_agg(i_price) into prices
    from unnest(items) as wanted(item) left join item on i_id = wanted.item;
  with taken as (
    update stock
       set s_quantity = case when s_quantity < line.qty + 10 then s_quantity + 91
                             else s_quantity end - line.qty
      from unnest(items, suppliers, quantities, prices) as line(item, supplier, qty, price)
     where s_i_id = line.item and s_w_id = line.supplier and s_w_id = any (suppliers)
    returning case dist when 1 then s_dist_01 when 2 then s_dist_02 when 3 then s_dist_03
                        when 4 then s_dist_04 when 5 then s_dist_05 when 6 then s_dist_06
                        when 7 then s_dist_07 when 8 then s_dist_08 when 9 then s_dist_09
                        else s_dist_10 end as info,
              s_quantity as left_over,
              line.qty + line.price * (1 + tax_w + tax_d) * (1 - discount) as line_amount)
  select array_agg(taken.info), array_agg(taken.left_over), array_agg(taken.line_amount)
    into infos, left_in_stock, amounts
    from taken;
  insert into order_line (ol_o_id, ol_d_id, ol_w_id, ol_number, ol_i_id, ol_supply_w_id,
                          ol_quantity, ol_amount, ol_dist_info)
  select next_order, dist, wh, line.num, line.item, line.supplier, line.qty, line.amount, line.info
    from unnest(numbers, items, suppliers, quantities, amounts, infos)
      as line(num, item, supplier, qty, amount, info);
  for k in 1 .. line_count loop
    total := total + amounts[k];
  end loop;";

/// The payment's locals beyond its arguments (both kinds), and its statements;
/// `{bc_note}` is the history note a bad-credit customer's data gets, `{plain_data}`
/// what the good-credit update returns.
const PAYMENT_LOCALS: &str = "
  wh_name varchar(11); di_name varchar(11); half integer; found_row record;";

const PAYMENT_BODY: &str = "
  update warehouse set w_ytd = w_ytd + amount
   where w_id = wh
  returning w_street_1, w_street_2, w_city, w_state, w_zip, w_name
       into wh_street_1, wh_street_2, wh_city, wh_state, wh_zip, wh_name;
  update district set d_ytd = d_ytd + amount
   where d_w_id = wh and d_id = dist
  returning d_street_1, d_street_2, d_city, d_state, d_zip, d_name
       into di_street_1, di_street_2, di_city, di_state, di_zip, di_name;
  if by_name = 1 then
    select count(c_last) into half from customer
     where c_last = last_name and c_d_id = cust_dist and c_w_id = cust_wh;
    -- HammerDB keeps the row at half the count, rounded down: none for 0 or 1.
    half := half / 2;
    for found_row in select c_first, c_middle, c_id, c_street_1, c_street_2, c_city, c_state,
                            c_zip, c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since
                       from customer
                      where c_w_id = cust_wh and c_d_id = cust_dist and c_last = last_name
                      order by c_first loop
      exit when half = 0;
      first_name := found_row.c_first; middle := found_row.c_middle; cust := found_row.c_id;
      street_1 := found_row.c_street_1; street_2 := found_row.c_street_2;
      city := found_row.c_city; state := found_row.c_state; zip := found_row.c_zip;
      phone := found_row.c_phone; credit := found_row.c_credit;
      credit_lim := found_row.c_credit_lim; discount := found_row.c_discount;
      balance := found_row.c_balance; since := found_row.c_since;
      half := half - 1;
    end loop;
  else
    select c_first, c_middle, c_last, c_street_1, c_street_2, c_city, c_state, c_zip,
           c_phone, c_credit, c_credit_lim, c_discount, c_balance, c_since
      into first_name, middle, last_name, street_1, street_2, city, state, zip,
           phone, credit, credit_lim, discount, balance, since
      from customer
     where c_w_id = cust_wh and c_d_id = cust_dist and c_id = cust;
  end if;
  if credit = 'BC' then
    update customer
       set c_balance = balance - amount,
           c_data = substr(cust || ' ' || cust_dist || ' ' || cust_wh || ' ' || dist || ' '
                           || wh || ' ' || to_char(amount, '9999.99'){bc_note} || ' | ' || c_data,
                           1, 500)
     where c_w_id = cust_wh and c_d_id = cust_dist and c_id = cust
    returning c_balance, c_data into balance, data;
  else
    update customer set c_balance = balance - amount
     where c_w_id = cust_wh and c_d_id = cust_dist and c_id = cust
    returning c_balance, {plain_data} into balance, data;
  end if;
  insert into history (h_c_d_id, h_c_w_id, h_c_id, h_d_id, h_w_id, h_date, h_amount, h_data)
  values (cust_dist, cust_wh, cust, dist, wh, paid_at, amount, wh_name || ' ' || di_name);";

/// The order status's customer and last order (both kinds); the function returns the
/// order's lines as rows, the procedure as text.
const ORDER_STATUS_LOCALS: &str = "
  wanted integer; seen integer := 0; found_row record;";

const ORDER_STATUS_BODY: &str = "
  if by_name = 1 then
    select count(c_id) into wanted from customer
     where c_last = last_name and c_d_id = dist and c_w_id = wh;
    -- HammerDB fetches half the count rounded up to even, plus one, and keeps the last
    -- row fetched: a fetch past the end leaves the customer null.
    wanted := (wanted + wanted % 2) / 2 + 1;
    for found_row in select c_balance, c_first, c_middle, c_id from customer
                      where c_last = last_name and c_d_id = dist and c_w_id = wh
                      order by c_first loop
      seen := seen + 1;
      balance := found_row.c_balance; first_name := found_row.c_first;
      middle := found_row.c_middle; cust := found_row.c_id;
      exit when seen = wanted;
    end loop;
    if seen < wanted then
      balance := null; first_name := null; middle := null; cust := null;
    end if;
  else
    select c_balance, c_first, c_middle, c_last into balance, first_name, middle, last_name
      from customer
     where c_id = cust and c_d_id = dist and c_w_id = wh;
  end if;
  select o_id, o_carrier_id, o_entry_d into last_order, carrier, entered
    from orders
   where o_d_id = dist and o_w_id = wh and o_c_id = cust
   order by o_id desc
   limit 1;";

/// The delivery's statements: the oldest new order of each district taken, its order
/// given the carrier, its lines delivered, their sum added to the customer's balance.
const DELIVERY_LOCALS: &str = "
  districts smallint[]; order_ids integer[]; customers integer[]; totals numeric[];";

const DELIVERY_BODY: &str = "
  with taken as (
    delete from new_order as gone
     using generate_series(1, 10) as each_district(d)
     where gone.no_w_id = wh and gone.no_d_id = each_district.d
       and gone.no_o_id = (select min(oldest.no_o_id) from new_order as oldest
                            where oldest.no_w_id = wh and oldest.no_d_id = each_district.d)
    returning gone.no_o_id, gone.no_d_id)
  select array_agg(taken.no_o_id), array_agg(taken.no_d_id) into order_ids, districts
    from taken;
  update orders set o_carrier_id = carrier
    from unnest(order_ids, districts) as delivered(o, d)
   where o_w_id = wh and o_d_id = delivered.d and o_id = delivered.o;
  with lines as (
    update order_line set ol_delivery_d = current_timestamp
      from unnest(order_ids, districts) as delivered(o, d)
     where ol_w_id = wh and ol_d_id = delivered.d and ol_o_id = delivered.o
    returning ol_d_id, ol_o_id, ol_amount)
  select array_agg(per_order.ol_d_id), array_agg(per_order.customer), array_agg(per_order.total)
    into districts, customers, totals
    from (select lines.ol_d_id,
                 (select o_c_id from orders
                   where o_w_id = wh and o_d_id = lines.ol_d_id and o_id = lines.ol_o_id) as customer,
                 sum(lines.ol_amount) as total
            from lines
           group by lines.ol_d_id, lines.ol_o_id) as per_order;
  update customer set c_balance = coalesce(c_balance, 0) + owed.total
    from unnest(districts, customers, totals) as owed(d, c, total)
   where c_w_id = wh and c_d_id = owed.d and c_id = owed.c;";

const STOCK_LEVEL_BODY: &str = "
  select count(distinct s_i_id) into low
    from order_line, stock, district
   where ol_w_id = wh and ol_d_id = dist and d_w_id = wh and d_id = dist
     and ol_o_id < d_next_o_id and ol_o_id >= d_next_o_id - 20
     and s_w_id = wh and s_i_id = ol_i_id and s_quantity < threshold;";

/// The payment's customer, warehouse and district columns, as variables: the
/// function's locals, the procedure's INOUT arguments.
const PAYMENT_COLUMNS: &str =
    "wh_street_1 varchar(20), wh_street_2 varchar(20), wh_city varchar(20),
  wh_state char(2), wh_zip char(9), di_street_1 varchar(20), di_street_2 varchar(20),
  di_city varchar(20), di_state char(2), di_zip char(9), first_name varchar(16),
  middle char(2), street_1 varchar(20), street_2 varchar(20), city varchar(20),
  state char(2), zip char(9), phone char(16)";

/// One routine: `head` (`function NAME(ARGS) returns T` or `procedure NAME(ARGS)`),
/// its locals, its statements, and an exception block when `handled`.
fn routine(head: &str, locals: &str, body: &str, handled: bool) -> String {
    let declare = if locals.trim().is_empty() {
        String::new()
    } else {
        format!("declare{locals}\n")
    };
    let handler = if handled { HANDLER } else { "" };
    format!("create {head}\nlanguage plpgsql as $$\n{declare}begin{body}\n{handler}\nend $$")
}

/// The function mode's routines: HammerDB's defaults.
fn functions() -> Vec<String> {
    let as_locals = |cols: &str| {
        cols.split(',')
            .map(|c| format!("\n  {};", c.trim()))
            .collect::<String>()
    };
    vec![
        DBMS_RANDOM.to_string(),
        routine(
            "function neword(wh integer, max_wh integer, dist integer, cust integer,
    line_count integer, next_order integer) returns numeric",
            &format!(
                "\n  discount numeric; cust_last varchar; cust_credit varchar;\n  tax_d numeric; tax_w numeric;{NEW_ORDER_LOCALS}"
            ),
            &format!("{NEW_ORDER_BODY}\n  return total;"),
            true,
        ),
        routine(
            "function delivery(wh integer, carrier integer) returns integer",
            DELIVERY_LOCALS,
            &format!("{DELIVERY_BODY}\n  return 1;"),
            true,
        ),
        routine(
            "function payment(wh integer, dist integer, cust_wh integer, cust_dist integer,
    cust integer, by_name integer, amount numeric, last_name varchar, credit varchar,
    balance numeric) returns integer",
            &format!(
                "{}\n  credit_lim numeric(12,2); discount numeric(4,4); since timestamp;\n  data varchar(500); paid_at timestamp := current_timestamp;{PAYMENT_LOCALS}",
                as_locals(PAYMENT_COLUMNS)
            ),
            &format!(
                "{}\n  return cust;",
                PAYMENT_BODY
                    .replace("{bc_note}", "")
                    .replace("{plain_data}", "' '")
            ),
            true,
        ),
        routine(
            "function ostat(wh integer, dist integer, cust integer, by_name integer,
    last_name varchar) returns setof record",
            &format!(
                "\n  balance numeric; first_name varchar; middle varchar; last_order integer;\n  entered timestamp; carrier integer;{ORDER_STATUS_LOCALS}"
            ),
            &format!(
                "{ORDER_STATUS_BODY}
  return query
    select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount::numeric, ol_delivery_d,
           null::integer, null::varchar, first_name, middle, balance, last_order, entered,
           carrier
      from order_line
     where ol_o_id = last_order and ol_d_id = dist and ol_w_id = wh;"
            ),
            true,
        ),
        routine(
            "function slev(wh integer, dist integer, threshold integer) returns integer",
            "\n  low integer;",
            &format!("{STOCK_LEVEL_BODY}\n  return low;"),
            true,
        ),
    ]
}

/// `-D storedprocs=1`: the same as procedures with HammerDB's INOUT arguments.
fn procedures() -> Vec<String> {
    vec![
        DBMS_RANDOM.to_string(),
        routine(
            "procedure neword(wh integer, max_wh integer, dist integer, cust integer,
    line_count integer, inout discount numeric, inout cust_last varchar,
    inout cust_credit varchar, inout tax_d numeric, inout tax_w numeric,
    inout next_order integer, entered timestamp)",
            NEW_ORDER_LOCALS,
            NEW_ORDER_BODY,
            true,
        ),
        routine(
            "procedure delivery(wh integer, carrier integer, delivered_at timestamp)",
            DELIVERY_LOCALS,
            DELIVERY_BODY,
            true,
        ),
        routine(
            &format!(
                "procedure payment(wh integer, dist integer, cust_wh integer, cust_dist integer,
    by_name integer, amount numeric, inout credit char(2), inout last_name varchar(16),
    inout cust integer, inout {}, inout since timestamp, inout credit_lim numeric(12,2),
    inout discount numeric(4,4), inout balance numeric(12,2), inout data varchar(500),
    paid_at timestamp)",
                PAYMENT_COLUMNS.replace(", ", ", inout ").replace(",\n  ", ",\n  inout ")
            ),
            PAYMENT_LOCALS,
            &PAYMENT_BODY
                .replace(
                    "{bc_note}",
                    " || ' ' || to_char(paid_at, 'YYYYMMDDHH24MISS') || ' ' || wh_name || ' ' || di_name",
                )
                .replace("{plain_data}", "c_data"),
            true,
        ),
        routine(
            "procedure ostat(wh integer, dist integer, inout cust integer, by_name integer,
    inout last_name varchar, inout first_name varchar, inout middle varchar,
    inout balance numeric, inout last_order integer, inout entered timestamp,
    inout carrier integer, inout lines text default '')",
            &format!("{ORDER_STATUS_LOCALS}\n  each_line record;"),
            &format!(
                "{ORDER_STATUS_BODY}
  for each_line in select ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_delivery_d
                     from order_line
                    where ol_o_id = last_order and ol_d_id = dist and ol_w_id = wh loop
    lines := lines || ',' || each_line.ol_i_id || ',' || each_line.ol_supply_w_id || ','
             || each_line.ol_quantity || ',' || each_line.ol_amount || ','
             || each_line.ol_delivery_d;
  end loop;"
            ),
            true,
        ),
        routine(
            "procedure slev(wh integer, dist integer, threshold integer, inout low integer)",
            "",
            STOCK_LEVEL_BODY,
            false,
        ),
    ]
}

/// The statements that create the routines: HammerDB's functions, or with
/// `procedures` its PROCEDUREs.
pub fn create(procedures_wanted: bool) -> Vec<String> {
    if procedures_wanted {
        procedures()
    } else {
        functions()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_routines_are_hammerdbs_names_with_an_exception_block_each() {
        for procs in [false, true] {
            let all = create(procs);
            let names: Vec<&str> = all
                .iter()
                .map(|s| s.split(['(', ' ']).nth(2).unwrap())
                .collect();
            assert_eq!(
                names,
                [
                    "dbms_random",
                    "neword",
                    "delivery",
                    "payment",
                    "ostat",
                    "slev"
                ]
            );
            let handled = all.iter().filter(|s| s.contains("then raise;")).count();
            // HammerDB's stock level procedure alone has no handler.
            assert_eq!(handled, if procs { 4 } else { 5 });
            assert!(all
                .iter()
                .all(|s| !s.contains("{bc_note}") && !s.contains("{plain_data}")));
        }
        let payment = &create(true)[3];
        assert_eq!(payment.matches("inout ").count(), 26, "{payment}");
    }
}
