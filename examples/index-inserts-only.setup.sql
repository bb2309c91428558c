-- Setup for index-inserts-only.sql: five secondary indexes on pgbench_history.
-- Run once with psql after pgbench-rs -i.
CREATE INDEX tid ON pgbench_history(tid);
CREATE INDEX bid ON pgbench_history(bid);
CREATE INDEX aid ON pgbench_history(aid);
CREATE INDEX delta ON pgbench_history(delta);
CREATE INDEX mtime ON pgbench_history(mtime);
