-- Index-inserts-only: a write-heavy OLTP workload. Every transaction inserts one row
-- into pgbench_history, which carries five secondary indexes (see
-- index-inserts-only.setup.sql), so the benchmark measures index maintenance under
-- concurrency. The headline workload of public cloud PostgreSQL benchmarks.
--
--   pgbench-rs -i -s 100 bench
--   psql -d bench -f examples/index-inserts-only.setup.sql
--   pgbench-rs -c 256 -j 256 -T 3900 -P 1 -f examples/index-inserts-only.sql bench
--
-- Or in one command on a throwaway server, which runs the companion
-- index-inserts-only.setup.sql itself after initialising:
--   pgbench-rs --temp-instance -c 32 -j 32 -T 60 -P 5 -f examples/index-inserts-only.sql
\set aid random(1, 1000000000)
\set bid random(1, 1000000000)
\set tid random(1, 1000000000)
\set delta random(-500000000, 500000000)
BEGIN;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
