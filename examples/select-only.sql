-- Select-only: read-only point lookups by primary key on pgbench_accounts, the
-- workload of `pgbench -S` written out as a script so it can be varied (more lookups
-- per transaction, another column, a different distribution). Measures the cost of
-- one round trip plus an index probe; with -M prepared the parse/plan cost is gone too.
--
--   pgbench-rs -i -s 100 bench
--   pgbench-rs -c 32 -j 32 -T 60 -P 5 -M prepared -s 100 -f examples/select-only.sql bench
--
-- :scale is the -s given on the run's command line (1 when absent): a custom script
-- does not look at pgbench_branches the way the builtin scripts do, so pass the same
-- -s as the init.
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
