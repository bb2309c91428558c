-- Two rows, four clients, repeatable read: concurrent updates fail with
-- serialization errors and are retried (--max-tries).
\set bid random(1, 2)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT bbalance FROM pgbench_branches WHERE bid = :bid;
SELECT pg_sleep(0.002);
UPDATE pgbench_branches SET bbalance = bbalance + 1 WHERE bid = :bid;
END;
