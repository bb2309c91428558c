-- Skewed access: a TPC-B-like update transaction whose accounts follow a Zipfian
-- distribution and whose tellers follow an exponential one, so a few hot rows get most
-- of the writes. Models real OLTP traffic (popular products, active users) and shows
-- what uniform workloads hide: row-lock waits on hot rows, and a smaller working set.
-- Compare its tps and -r latencies with the same run of the builtin tpcb-like script.
--
--   pgbench-rs -i -s 10 bench
--   pgbench-rs -c 16 -j 16 -T 60 -P 5 -s 10 -r -f examples/skewed-hot-rows.sql bench
--
-- random_zipfian(1, n, 1.07): value k is drawn with probability proportional to
-- 1/k^1.07, so 1 is the hottest (about 10% of draws at scale 10) and the first hundred
-- take about half. permute() then maps those ranks to scattered aids, so the hot rows
-- are not all on the first heap and index pages; drop it to study the clustered case.
-- random_exponential(1, n, 5.0): the lowest 1/5 of the tellers get about 63% of
-- the draws (1 - e^-1). Raise the parameters for more skew. Pass the -s of the init.
\set naccounts 100000 * :scale
\set rank random_zipfian(1, :naccounts, 1.07)
\set aid 1 + permute(:rank - 1, :naccounts)
\set tid random_exponential(1, 10 * :scale, 5.0)
\set bid (:tid - 1) / 10 + 1
\set delta random(-5000, 5000)
BEGIN;
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);
END;
