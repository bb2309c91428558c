-- Conditional logic with \gset and \if: a cash machine. Half of the transactions
-- deposit, half withdraw, and a withdrawal is declined when the balance does not
-- cover it. The transaction locks and reads the account; \gset stores the row's
-- columns into client variables (prefix acct_, so the column abalance becomes
-- :acct_abalance), and \if / \elif pick the branch the way application code would.
-- Models read-then-write business rules, where the row stays locked while the client
-- decides.
--
--   pgbench-rs -i -s 10 bench
--   pgbench-rs -c 8 -j 8 -T 60 -P 5 -s 10 -r -f examples/conditional-withdrawal.sql bench
--
-- With -r each branch's statements have their own latency line, averaged over the
-- transactions that took that branch. After a fresh -i every balance is 0, so
-- withdrawals are declined until a deposit has reached the account. \gset needs
-- exactly one row back, or the client aborts; every aid from 1 to 100000 * scale
-- exists after -i. Pass the -s of the init.
\set aid random(1, 100000 * :scale)
\set amount random(1, 1000)
\set withdraw random(0, 1)
BEGIN;
SELECT abalance FROM pgbench_accounts WHERE aid = :aid FOR UPDATE \gset acct_
\if :withdraw = 0
UPDATE pgbench_accounts SET abalance = abalance + :amount WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (0, 0, :aid, :amount, CURRENT_TIMESTAMP);
\elif :acct_abalance >= :amount
UPDATE pgbench_accounts SET abalance = abalance - :amount WHERE aid = :aid;
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (0, 0, :aid, -:amount, CURRENT_TIMESTAMP);
\endif
END;
