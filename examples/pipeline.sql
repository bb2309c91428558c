-- Pipeline mode: the TPC-B-like transaction of the builtin script sent in one round
-- trip. Between \startpipeline and \endpipeline the client sends every statement
-- without waiting for results; \endpipeline sends one Sync and reads them all. Models
-- an application that batches its statements (libpq pipeline mode, JDBC batching) and
-- shows how much of a transaction's latency is network round trips: compare with
-- `-b tpcb-like -M extended` on the same server, ideally over TCP.
--
--   pgbench-rs -i -s 10 bench
--   pgbench-rs -c 16 -j 16 -T 60 -P 5 -s 10 -M extended -r -f examples/pipeline.sql bench
--
-- Pipelines need the extended or prepared protocol (-M extended or -M prepared); with
-- the default simple protocol the client aborts ("cannot use pipeline mode with the
-- simple query protocol"). \gset and \aset are not allowed inside a pipeline. In -r
-- the statements show about 0 ms and \endpipeline carries the wait for the whole batch.
-- Pass the -s of the init.
-- test-options: -M extended
\set aid random(1, 100000 * :scale)
\set bid random(1, 1 * :scale)
\set tid random(1, 10 * :scale)
\set delta random(-5000, 5000)
\startpipeline
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
\endpipeline
