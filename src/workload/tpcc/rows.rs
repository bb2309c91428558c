//! The rows of a TPC-C database, written in COPY's text format: as HammerDB 4.12's
//! build populates it (`-D mode=hammerdb`, pgoltp.tcl's `LoadItems`, `Stock`,
//! `Customer`, `Orders`, ...) or as TPC-C 5.11 clause 4.3.3.1 does (`mode=spec`).
//! HammerDB's values differ from the clause's: half of its customers have bad credit
//! (10%), its last names' NURand constant is 123 (the run uses it too), order `o`'s
//! customer is drawn from `o..3000` (not a permutation: about half the customers have
//! no order), its delivered lines carry amounts and the undelivered none (the other
//! way round), its taxes are 0.10-0.20, discounts 0.00-0.50 in cents, and about 9.5%
//! of items and stock have "original" (lower case, replacing 9 characters) in their
//! data. Pure: each unit of the load (the items, one warehouse with its districts and
//! stock, one district's customers and orders) draws from a generator seeded by what
//! it is, so the same warehouses hold the same rows whichever connection of `-j` loads
//! them, and a seeded run on them is reproducible.

use super::Mode;
use pgbench_script::prng::Prng;

/// Items, one table for all warehouses.
pub const ITEMS: i32 = 100_000;
pub const DISTRICTS: i32 = 10;
pub const CUSTOMERS: i32 = 3_000;
/// Orders per district at load time; the last 900 of them are undelivered.
pub const ORDERS: i32 = 3_000;
/// The first order of a district still undelivered (in `new_order`).
pub const FIRST_NEW_ORDER: i32 = 2_101;
/// NURand's C for last names at load time: TPC-C's (the run uses 223, clause
/// 2.1.6.1), and HammerDB's, which its run uses too.
pub const C_LAST_LOAD: i64 = 157;
pub const C_LAST_HAMMERDB: i64 = 123;

const ALNUM: &[u8; 62] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const SYLLABLES: [&str; 10] = [
    "BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING",
];

/// What a unit of the load is, for its generator's seed.
#[derive(Debug, Clone, Copy)]
enum Unit {
    Items,
    Warehouse(i32),
    Stock(i32),
    Customers(i32, i32),
    Orders(i32, i32),
    LineCounts(i32, i32),
}

fn rng(unit: Unit) -> Prng {
    let (kind, w, d) = match unit {
        Unit::Items => (1, 0, 0),
        Unit::Warehouse(w) => (2, w, 0),
        Unit::Stock(w) => (3, w, 0),
        Unit::Customers(w, d) => (4, w, d),
        Unit::Orders(w, d) => (5, w, d),
        Unit::LineCounts(w, d) => (6, w, d),
    };
    Prng::seed(0x7063_635f_6c6f_6164 ^ (kind << 56) ^ ((w as u64) << 8) ^ d as u64)
}

/// The last name of number `n` (0..999): three syllables by its digits (4.3.2.3).
pub fn last_name(n: i64) -> String {
    let n = n as usize;
    [n / 100 % 10, n / 10 % 10, n % 10]
        .iter()
        .map(|&i| SYLLABLES[i])
        .collect()
}

/// NURand(A, x, y) with the constant C (2.1.6).
pub fn nurand(rng: &mut Prng, a: i64, x: i64, y: i64, c: i64) -> i64 {
    (((rng.int_range(0, a) | rng.int_range(x, y)) + c) % (y - x + 1)) + x
}

/// A random a-string of `min..=max` alphanumeric characters.
fn astring(rng: &mut Prng, buf: &mut Vec<u8>, min: i64, max: i64) {
    let len = rng.int_range(min, max);
    let mut bits = 0u64;
    for i in 0..len {
        // Ten characters of 62 from each 64 random bits.
        if i % 10 == 0 {
            bits = rng.next_u64();
        }
        buf.push(ALNUM[(bits % 62) as usize]);
        bits /= 62;
    }
}

/// Which items (or stock rows) have "original" in their data: TPC-C's 10% at random
/// (4.3.3.1), or HammerDB's 10,000 draws of a position in 0..=100,000 (some twice).
fn originals(rng: &mut Prng, mode: Mode) -> Option<Vec<bool>> {
    (mode == Mode::Hammerdb).then(|| {
        let mut marked = vec![false; ITEMS as usize + 1];
        for _ in 0..ITEMS / 10 {
            marked[rng.int_range(0, i64::from(ITEMS)) as usize] = true;
        }
        marked
    })
}

/// An a-string of 26..50 characters with "ORIGINAL" somewhere in 10% of them
/// (4.3.3.1); for HammerDB, "original" where `marked` says, over the 9 characters
/// from a random place (Tcl's `string replace` of `first` to `first + 8`).
fn data_with_original(rng: &mut Prng, buf: &mut Vec<u8>, marked: Option<bool>) {
    let start = buf.len();
    astring(rng, buf, 26, 50);
    let len = buf.len() - start;
    match marked {
        None if rng.int_range(1, 10) == 1 => {
            let at = start + rng.int_range(0, len as i64 - 8) as usize;
            buf[at..at + 8].copy_from_slice(b"ORIGINAL");
        }
        Some(true) => {
            let at = start + rng.int_range(0, len as i64 - 8) as usize;
            let last = (at + 9).min(buf.len());
            buf.splice(at..last, b"original".iter().copied());
        }
        _ => {}
    }
}

fn nstring(rng: &mut Prng, buf: &mut Vec<u8>, len: usize) {
    for _ in 0..len {
        buf.push(b'0' + rng.int_range(0, 9) as u8);
    }
}

fn tab(buf: &mut Vec<u8>) {
    buf.push(b'\t');
}

fn int(buf: &mut Vec<u8>, v: i64) {
    buf.extend_from_slice(v.to_string().as_bytes());
}

/// `v / 10^scale` as a decimal with `scale` digits (`v` >= 0 or a whole negative).
fn fixed(buf: &mut Vec<u8>, v: i64, scale: u32) {
    let unit = 10i64.pow(scale);
    let sign = if v < 0 { "-" } else { "" };
    let text = format!(
        "{sign}{}.{:0width$}",
        v.abs() / unit,
        v.abs() % unit,
        width = scale as usize
    );
    buf.extend_from_slice(text.as_bytes());
}

/// Street 1, street 2, city, state, zip (4.3.2.7), each followed by a tab: TPC-C's
/// state of two letters and zip of four random digits and 11111, or HammerDB's state
/// of two alphanumerics and zip of a number below 10,000 over `000011111`.
fn address(rng: &mut Prng, buf: &mut Vec<u8>, mode: Mode) {
    for _ in 0..3 {
        astring(rng, buf, 10, 20);
        tab(buf);
    }
    match mode {
        Mode::Spec => {
            for _ in 0..2 {
                buf.push(b'A' + rng.int_range(0, 25) as u8);
            }
            tab(buf);
            nstring(rng, buf, 4);
            buf.extend_from_slice(b"11111\t");
        }
        Mode::Hammerdb => {
            astring(rng, buf, 2, 2);
            tab(buf);
            let number = rng.int_range(0, 9_999).to_string();
            buf.extend_from_slice(number.as_bytes());
            buf.extend_from_slice(&b"000011111"[number.len()..]);
            tab(buf);
        }
    }
}

/// A tax: TPC-C's 0.0000-0.2000, HammerDB's 0.10-0.20.
fn tax(rng: &mut Prng, buf: &mut Vec<u8>, mode: Mode) {
    match mode {
        Mode::Spec => fixed(buf, rng.int_range(0, 2_000), 4),
        Mode::Hammerdb => fixed(buf, rng.int_range(10, 20), 2),
    }
}

/// Calls `row` for each of the `ITEMS` rows (item ids 1..), handing `out` the text of
/// `batch` rows at a time with their count.
fn per_item<E>(
    batch: i32,
    row_bytes: usize,
    mut row: impl FnMut(&mut Vec<u8>, i32),
    mut out: impl FnMut(&[u8], i32) -> Result<(), E>,
) -> Result<(), E> {
    let mut buf = Vec::with_capacity(batch as usize * row_bytes);
    let mut n = 0;
    for i in 1..=ITEMS {
        row(&mut buf, i);
        n += 1;
        if n == batch || i == ITEMS {
            out(&buf, n)?;
            buf.clear();
            n = 0;
        }
    }
    Ok(())
}

/// Writes the `item` rows, `batch` at a time, to `out` (with the rows' count).
pub fn items<E>(
    mode: Mode,
    batch: i32,
    out: impl FnMut(&[u8], i32) -> Result<(), E>,
) -> Result<(), E> {
    let mut rng = rng(Unit::Items);
    let marked = originals(&mut rng, mode);
    let row = |buf: &mut Vec<u8>, i: i32| {
        int(buf, i64::from(i));
        tab(buf);
        int(buf, rng.int_range(1, 10_000));
        tab(buf);
        astring(&mut rng, buf, 14, 24);
        tab(buf);
        fixed(buf, rng.int_range(100, 10_000), 2);
        tab(buf);
        let original = marked.as_ref().map(|m| m[i as usize]);
        data_with_original(&mut rng, buf, original);
        buf.push(b'\n');
    };
    per_item(batch, 80, row, out)
}

/// The warehouse row `w` and its district rows: (warehouse, districts).
pub fn warehouse(w: i32, mode: Mode) -> (Vec<u8>, Vec<u8>) {
    let mut rng = rng(Unit::Warehouse(w));
    let mut wh = Vec::with_capacity(128);
    int(&mut wh, i64::from(w));
    tab(&mut wh);
    astring(&mut rng, &mut wh, 6, 10);
    tab(&mut wh);
    address(&mut rng, &mut wh, mode);
    tax(&mut rng, &mut wh, mode);
    wh.extend_from_slice(b"\t300000.00\n");
    let mut ds = Vec::with_capacity(1280);
    for d in 1..=DISTRICTS {
        int(&mut ds, i64::from(d));
        tab(&mut ds);
        int(&mut ds, i64::from(w));
        tab(&mut ds);
        astring(&mut rng, &mut ds, 6, 10);
        tab(&mut ds);
        address(&mut rng, &mut ds, mode);
        tax(&mut rng, &mut ds, mode);
        ds.extend_from_slice(format!("\t30000.00\t{}\n", ORDERS + 1).as_bytes());
    }
    (wh, ds)
}

/// Writes the stock rows of warehouse `w`, `batch` items at a time, to `out`.
pub fn stock<E>(
    w: i32,
    mode: Mode,
    batch: i32,
    out: impl FnMut(&[u8], i32) -> Result<(), E>,
) -> Result<(), E> {
    let mut rng = rng(Unit::Stock(w));
    let marked = originals(&mut rng, mode);
    let row = |buf: &mut Vec<u8>, i: i32| {
        int(buf, i64::from(i));
        tab(buf);
        int(buf, i64::from(w));
        tab(buf);
        int(buf, rng.int_range(10, 100));
        tab(buf);
        for _ in 0..10 {
            astring(&mut rng, buf, 24, 24);
            tab(buf);
        }
        buf.extend_from_slice(b"0\t0\t0\t");
        let original = marked.as_ref().map(|m| m[i as usize]);
        data_with_original(&mut rng, buf, original);
        buf.push(b'\n');
    };
    per_item(batch, 320, row, out)
}

/// The customer rows and their history rows of district `d` of warehouse `w`.
pub fn customers(w: i32, d: i32, mode: Mode) -> (Vec<u8>, Vec<u8>) {
    let mut rng = rng(Unit::Customers(w, d));
    let mut cs = Vec::with_capacity(CUSTOMERS as usize * 700);
    let mut hs = Vec::with_capacity(CUSTOMERS as usize * 64);
    let (w, d) = (i64::from(w), i64::from(d));
    let c_last = match mode {
        Mode::Spec => C_LAST_LOAD,
        Mode::Hammerdb => C_LAST_HAMMERDB,
    };
    for c in 1..=i64::from(CUSTOMERS) {
        for v in [c, d, w] {
            int(&mut cs, v);
            tab(&mut cs);
        }
        astring(&mut rng, &mut cs, 8, 16);
        cs.extend_from_slice(b"\tOE\t");
        let name = if c <= 1_000 {
            c - 1
        } else {
            nurand(&mut rng, 255, 0, 999, c_last)
        };
        cs.extend_from_slice(last_name(name).as_bytes());
        tab(&mut cs);
        address(&mut rng, &mut cs, mode);
        nstring(&mut rng, &mut cs, 16);
        cs.extend_from_slice(b"\tnow\t");
        // Bad credit: 10% (4.3.3.1), HammerDB's half.
        let bad = match mode {
            Mode::Spec => rng.int_range(1, 10) == 1,
            Mode::Hammerdb => rng.int_range(0, 1) == 0,
        };
        cs.extend_from_slice(if bad { b"BC" } else { b"GC" });
        cs.extend_from_slice(b"\t50000.00\t");
        match mode {
            Mode::Spec => fixed(&mut cs, rng.int_range(0, 5_000), 4),
            Mode::Hammerdb => fixed(&mut cs, rng.int_range(0, 50), 2),
        }
        cs.extend_from_slice(b"\t-10.00\t10.00\t1\t0\t");
        astring(&mut rng, &mut cs, 300, 500);
        cs.push(b'\n');
        hs.extend_from_slice(format!("{c}\t{d}\t{w}\t{d}\t{w}\tnow\t10.00\t").as_bytes());
        astring(&mut rng, &mut hs, 12, 24);
        hs.push(b'\n');
    }
    (cs, hs)
}

/// Each order's line count in district `d` of warehouse `w` (5..15), drawn apart
/// from the rest so the load knows its total rows before it starts.
pub fn line_counts(w: i32, d: i32) -> Vec<i64> {
    let mut rng = rng(Unit::LineCounts(w, d));
    (0..ORDERS).map(|_| rng.int_range(5, 15)).collect()
}

/// The orders, order lines and new orders of district `d` of warehouse `w`.
pub struct DistrictOrders {
    pub orders: Vec<u8>,
    pub lines: Vec<u8>,
    pub new_orders: Vec<u8>,
}

/// Each order's customer: a permutation of the customers (4.3.3.1), or HammerDB's
/// shuffle, whose swap sets only one side, so order `o` gets a customer of `o..3000`.
fn order_customers(rng: &mut Prng, mode: Mode) -> Vec<i64> {
    let n = i64::from(CUSTOMERS);
    match mode {
        Mode::Spec => {
            let mut customers: Vec<i64> = (1..=n).collect();
            for i in (1..customers.len()).rev() {
                let j = rng.int_range(0, i as i64) as usize;
                customers.swap(i, j);
            }
            customers
        }
        Mode::Hammerdb => (1..=n).map(|o| rng.int_range(o, n)).collect(),
    }
}

pub fn orders(w: i32, d: i32, mode: Mode) -> DistrictOrders {
    let mut rng = rng(Unit::Orders(w, d));
    let counts = line_counts(w, d);
    let customers = order_customers(&mut rng, mode);
    let total_lines: i64 = counts.iter().sum();
    let mut out = DistrictOrders {
        orders: Vec::with_capacity(ORDERS as usize * 40),
        lines: Vec::with_capacity(total_lines as usize * 64),
        new_orders: Vec::with_capacity(900 * 16),
    };
    let (w, d) = (i64::from(w), i64::from(d));
    for o in 1..=i64::from(ORDERS) {
        let delivered = o < i64::from(FIRST_NEW_ORDER);
        let ol_cnt = counts[o as usize - 1];
        let carrier = if delivered {
            rng.int_range(1, 10).to_string()
        } else {
            "\\N".to_string()
        };
        let c = customers[o as usize - 1];
        out.orders.extend_from_slice(
            format!("{o}\t{d}\t{w}\t{c}\tnow\t{carrier}\t{ol_cnt}\t1\n").as_bytes(),
        );
        if !delivered {
            out.new_orders
                .extend_from_slice(format!("{o}\t{d}\t{w}\n").as_bytes());
        }
        for n in 1..=ol_cnt {
            let item = rng.int_range(1, i64::from(ITEMS));
            let l = &mut out.lines;
            l.extend_from_slice(format!("{o}\t{d}\t{w}\t{n}\t{item}\t{w}\t").as_bytes());
            l.extend_from_slice(if delivered { b"now\t5\t" } else { b"\\N\t5\t" });
            // TPC-C: the undelivered lines carry amounts; HammerDB: the delivered.
            match (mode, delivered) {
                (Mode::Spec, false) => fixed(l, rng.int_range(1, 999_999), 2),
                (Mode::Hammerdb, true) => fixed(l, rng.int_range(10, 10_000), 2),
                _ => l.extend_from_slice(b"0.00"),
            }
            tab(l);
            astring(&mut rng, l, 24, 24);
            l.push(b'\n');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(buf: &[u8]) -> Vec<Vec<String>> {
        String::from_utf8(buf.to_vec())
            .unwrap()
            .lines()
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect()
    }

    #[test]
    fn last_names_and_nurand_follow_the_spec() {
        assert_eq!(last_name(371), "PRICALLYOUGHT");
        assert_eq!(last_name(0), "BARBARBAR");
        let mut rng = Prng::seed(1);
        for _ in 0..10_000 {
            let n = nurand(&mut rng, 255, 0, 999, C_LAST_LOAD);
            assert!((0..=999).contains(&n));
        }
    }

    #[test]
    fn customers_have_the_spec_columns_and_about_10_percent_bad_credit() {
        let (cs, hs) = customers(2, 3, Mode::Spec);
        let (cs, hs) = (lines(&cs), lines(&hs));
        assert_eq!((cs.len(), hs.len()), (3_000, 3_000));
        assert!(cs.iter().all(|c| c.len() == 21));
        assert!(hs.iter().all(|h| h.len() == 8));
        assert_eq!(cs[999][5], last_name(999));
        let bad = cs.iter().filter(|c| c[13] == "BC").count();
        assert!((200..400).contains(&bad), "{bad}");
        assert_eq!(
            customers(2, 3, Mode::Spec).0,
            customers(2, 3, Mode::Spec).0,
            "the same rows every time"
        );
    }

    #[test]
    fn hammerdbs_customers_are_half_bad_credit_with_its_name_constant() {
        let (cs, _) = customers(1, 1, Mode::Hammerdb);
        let cs = lines(&cs);
        assert!(cs.iter().all(|c| c.len() == 21));
        let bad = cs.iter().filter(|c| c[13] == "BC").count();
        assert!((1_400..1_600).contains(&bad), "{bad}");
        // Discounts in cents up to 0.50, zips of a number over 000011111.
        assert!(cs
            .iter()
            .all(|c| c[15].len() == 4 && c[15].as_str() <= "0.50"));
        assert!(cs
            .iter()
            .all(|c| c[10].len() == 9 && c[10].ends_with("11111")));
        // NURand(255) with C = 123: its commonest name is 123 past NURand's mode.
        let mut counts = [0; 1000];
        let mut rng = Prng::seed(7);
        for _ in 0..200_000 {
            counts[nurand(&mut rng, 255, 0, 999, 0) as usize] += 1;
        }
        let base_mode = (0..1000).max_by_key(|&n| counts[n]).unwrap() as i64;
        let names: Vec<&String> = cs[1000..].iter().map(|c| &c[5]).collect();
        let commonest = |c: i64| last_name((base_mode + c) % 1000);
        let hits = |c| names.iter().filter(|n| ***n == commonest(c)).count();
        assert!(
            hits(C_LAST_HAMMERDB) > 3 * hits(C_LAST_LOAD),
            "{}",
            hits(123)
        );
    }

    #[test]
    fn orders_are_a_permutation_of_customers_with_900_undelivered() {
        let o = orders(1, 1, Mode::Spec);
        let (os, ls, ns) = (lines(&o.orders), lines(&o.lines), lines(&o.new_orders));
        let mut custs: Vec<i64> = os.iter().map(|r| r[3].parse().unwrap()).collect();
        custs.sort();
        assert_eq!(custs, (1..=3000).collect::<Vec<_>>());
        assert_eq!(ns.len(), 900);
        assert_eq!(ns[0][0], "2101");
        let count: i64 = os.iter().map(|r| r[6].parse::<i64>().unwrap()).sum();
        assert_eq!(ls.len() as i64, count);
        assert_eq!(line_counts(1, 1).iter().sum::<i64>(), count);
        assert!(os[2100][5] == "\\N" && os[2099][5] != "\\N");
    }

    #[test]
    fn hammerdbs_orders_leave_about_half_the_customers_without_one() {
        let o = orders(1, 1, Mode::Hammerdb);
        let (os, ls) = (lines(&o.orders), lines(&o.lines));
        let custs: std::collections::BTreeSet<i64> =
            os.iter().map(|r| r[3].parse().unwrap()).collect();
        assert!((1_350..1_650).contains(&custs.len()), "{}", custs.len());
        // Order o's customer is one of o..3000.
        assert!(os
            .iter()
            .all(|r| r[3].parse::<i64>().unwrap() >= r[0].parse().unwrap()));
        assert_eq!(lines(&o.new_orders).len(), 900);
        // The delivered lines carry the amounts, the undelivered none.
        let undelivered = |l: &Vec<String>| l[0].parse::<i32>().unwrap() >= FIRST_NEW_ORDER;
        assert!(ls.iter().filter(|l| undelivered(l)).all(|l| l[8] == "0.00"));
        assert!(ls
            .iter()
            .filter(|l| !undelivered(l))
            .any(|l| l[8] != "0.00"));
    }

    fn all_items(mode: Mode) -> Vec<Vec<String>> {
        let mut all = Vec::new();
        items(mode, 7_000, |buf, _| {
            all.extend_from_slice(buf);
            Ok::<(), ()>(())
        })
        .unwrap();
        lines(&all)
    }

    #[test]
    fn items_have_about_10_percent_original() {
        let rows = all_items(Mode::Spec);
        assert_eq!(rows.len(), 100_000);
        let original = rows.iter().filter(|r| r[4].contains("ORIGINAL")).count();
        assert!((9_000..11_000).contains(&original), "{original}");
        // HammerDB's: 10,000 draws, some of them the same item, in lower case.
        let rows = all_items(Mode::Hammerdb);
        let original = rows.iter().filter(|r| r[4].contains("original")).count();
        assert!((9_300..9_700).contains(&original), "{original}");
        assert!(rows.iter().all(|r| (25..=50).contains(&r[4].len())));
    }

    #[test]
    fn stock_comes_in_batches_of_every_item() {
        for mode in [Mode::Spec, Mode::Hammerdb] {
            let mut rows = 0;
            stock(1, mode, 30_000, |buf, n| {
                assert_eq!(lines(buf).len() as i32, n);
                rows += n;
                Ok::<(), ()>(())
            })
            .unwrap();
            assert_eq!(rows, ITEMS);
        }
    }
}
