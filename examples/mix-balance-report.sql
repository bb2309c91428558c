-- Weighted mix, part 2 of 2: balance reports, a read-only range scan summing the
-- balances of 1,000 consecutive accounts. Run it alone, or weighted against
-- mix-deposit.sql (see there) to get an 80/20 write/read mix:
--
--   pgbench-rs -c 16 -j 16 -T 60 -P 5 -s 10 \
--              -f examples/mix-deposit.sql@8 -f examples/mix-balance-report.sql@2 bench
--
-- Pass the -s of the init.
\set first random(1, 100000 * :scale - 999)
\set last :first + 999
SELECT count(*), sum(abalance), min(abalance), max(abalance)
  FROM pgbench_accounts
 WHERE aid BETWEEN :first AND :last;
