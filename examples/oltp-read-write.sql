-- OLTP read-write in the style of sysbench's oltp_read_write: one transaction of ten
-- point selects, four range selects over 100 rows (simple, sum, order by, distinct),
-- an update of an indexed column, an update of a non-indexed column, and a delete
-- followed by an insert of the same row. The classic mixed OLTP yardstick; compare
-- its tps with sysbench's "transactions" and its -r statement latencies with
-- sysbench's per-query figures.
-- setup: sbtest.setup.sql   (run by --temp-instance; with a real server use psql as below)
--
--   pgbench-rs -i -s 10 bench
--   psql -d bench -f examples/sbtest.setup.sql
--   pgbench-rs -c 16 -j 16 -T 60 -P 5 -s 10 -M prepared --max-tries=10 -r \
--              -f examples/oltp-read-write.sql bench
--
-- Needs table sbtest1, 10,000 rows per scale unit: run examples/sbtest.setup.sql once
-- after -i, and give the run the -s of the init. The row ids are uniform over the
-- table, like sysbench's --rand-type=uniform; see skewed-hot-rows.sql for skew.
--
-- Concurrent transactions that update rows in random order can deadlock; sysbench
-- ignores the error and retries, pgbench retries deadlocks and serialization failures
-- when --max-tries is above 1 (the report counts them). The insert says ON CONFLICT DO
-- NOTHING because another client may have put back the same id first; sysbench lets
-- that duplicate-key error pass, while pgbench would abort the client on it.
-- test-options: --max-tries=10
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
