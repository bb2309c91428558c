-- OLTP read-only in the style of sysbench's oltp_read_only: one transaction of ten
-- point selects and four range selects over 100 rows (simple, sum, order by,
-- distinct). Measures read throughput of a cached working set: index probes, short
-- range scans, a small sort and a small aggregate per transaction.
-- setup: sbtest.setup.sql   (run by --temp-instance; with a real server use psql as below)
--
--   pgbench-rs -i -s 10 bench
--   psql -d bench -f examples/sbtest.setup.sql
--   pgbench-rs -c 16 -j 16 -T 60 -P 5 -s 10 -M prepared -f examples/oltp-read-only.sql bench
--
-- Needs table sbtest1, 10,000 rows per scale unit: run examples/sbtest.setup.sql once
-- after -i, and give the run the -s of the init. The row ids are uniform over the
-- table, like sysbench's --rand-type=uniform; see skewed-hot-rows.sql for skew.
BEGIN;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set id random(1, 10000 * :scale)
SELECT c FROM sbtest1 WHERE id = :id;
\set start random(1, 10000 * :scale)
\set stop :start + 99
SELECT c FROM sbtest1 WHERE id BETWEEN :start AND :stop;
\set start random(1, 10000 * :scale)
\set stop :start + 99
SELECT sum(k) FROM sbtest1 WHERE id BETWEEN :start AND :stop;
\set start random(1, 10000 * :scale)
\set stop :start + 99
SELECT c FROM sbtest1 WHERE id BETWEEN :start AND :stop ORDER BY c;
\set start random(1, 10000 * :scale)
\set stop :start + 99
SELECT DISTINCT c FROM sbtest1 WHERE id BETWEEN :start AND :stop ORDER BY c;
COMMIT;
