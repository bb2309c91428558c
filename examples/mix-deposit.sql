-- Weighted mix, part 1 of 2: deposits. With mix-balance-report.sql this models a
-- banking application whose traffic is 80% small writes and 20% short reports:
-- pgbench picks one script per transaction at random, in proportion to the weights
-- given after @ on the command line.
--
--   pgbench-rs -i -s 10 bench
--   pgbench-rs -c 16 -j 16 -T 60 -P 5 -s 10 \
--              -f examples/mix-deposit.sql@8 -f examples/mix-balance-report.sql@2 bench
--
-- The report then has a section per script (SQL script 1, SQL script 2) with its
-- weight, its share of the transactions and its own latency. Each client uses its own
-- teller (:client_id is 0, 1, 2, ...), so clients do not queue on a hot teller row as
-- they do in the builtin tpcb-like script. Pass the -s of the init.
-- test-options: -f mix-deposit.sql@8 -f mix-balance-report.sql@2
\set aid random(1, 100000 * :scale)
\set tid :client_id % (10 * :scale) + 1
\set bid (:tid - 1) / 10 + 1
\set delta random(1, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
