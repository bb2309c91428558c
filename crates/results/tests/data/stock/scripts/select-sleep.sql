-- A read and a short pause: a few thousand transactions a second, so the -l logs
-- of a few seconds stay small.
\set aid random(1, 100000 * :scale)
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;
\sleep 500 us
