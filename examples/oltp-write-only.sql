-- OLTP write-only in the style of sysbench's oltp_write_only: one transaction with
-- an update of an indexed column, an update of a non-indexed column (a HOT update
-- when the page has room), and a delete followed by an insert of the same row.
-- Measures WAL, index maintenance and row locking.
-- setup: sbtest.setup.sql   (run by --temp-instance; with a real server use psql as below)
--
--   pgbench-rs -i -s 10 bench
--   psql -d bench -f examples/sbtest.setup.sql
--   pgbench-rs -c 16 -j 16 -T 60 -P 5 -s 10 -M prepared --max-tries=10 \
--              -f examples/oltp-write-only.sql bench
--
-- Needs table sbtest1, 10,000 rows per scale unit: run examples/sbtest.setup.sql once
-- after -i, and give the run the -s of the init. The row ids are uniform over the
-- table, like sysbench's --rand-type=uniform; see skewed-hot-rows.sql for skew.
--
-- Deadlocks between concurrent transactions are retried with --max-tries above 1; the
-- insert says ON CONFLICT DO NOTHING because another client may have put back the
-- same id first (sysbench ignores that duplicate-key error; pgbench would abort).
-- test-options: --max-tries=10
BEGIN;
-- index update (k is indexed), then non-index update of c
\set id random(1, 10000 * :scale)
UPDATE sbtest1 SET k = k + 1 WHERE id = :id;
\set id random(1, 10000 * :scale)
\set cnum random(0, 99999999999)
UPDATE sbtest1 SET c = rtrim(repeat(lpad(:cnum::text, 11, '0') || '-', 10), '-') WHERE id = :id;
-- delete one row and put it back with new values
\set id random(1, 10000 * :scale)
\set k random(1, 10000 * :scale)
\set cnum random(0, 99999999999)
\set padnum random(0, 99999999999)
DELETE FROM sbtest1 WHERE id = :id;
INSERT INTO sbtest1 (id, k, c, pad)
VALUES (:id, :k,
        rtrim(repeat(lpad(:cnum::text, 11, '0') || '-', 10), '-'),
        rtrim(repeat(lpad(:padnum::text, 11, '0') || '-', 5), '-'))
ON CONFLICT (id) DO NOTHING;
COMMIT;
