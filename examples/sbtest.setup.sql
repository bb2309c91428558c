-- Setup for the sysbench-style OLTP examples (oltp-read-write.sql, oltp-read-only.sql,
-- oltp-write-only.sql): table sbtest1 as sysbench's oltp_common.lua creates it (id
-- primary key, secondary index on k, char(120) c and char(60) pad), with 10,000 rows
-- (sysbench's default --table-size) per scale unit of the pgbench -i that came before:
-- -i -s 1 gives 10,000 rows, -i -s 100 gives 1,000,000. Run it once with psql after -i:
--
--   pgbench-rs -i -s 100 bench
--   psql -d bench -f examples/sbtest.setup.sql
--
-- then run the OLTP scripts with the same -s, which they read as :scale. Rerunning it
-- drops and refills the table, undoing what earlier runs changed. Plain SQL in one
-- transaction, so any client can send it as one string.
DROP TABLE IF EXISTS sbtest1;
CREATE TABLE sbtest1 (
    id integer NOT NULL,
    k integer DEFAULT 0 NOT NULL,
    c char(120) DEFAULT '' NOT NULL,
    pad char(60) DEFAULT '' NOT NULL,
    PRIMARY KEY (id)
);
-- sysbench's c is ten groups of 11 random digits joined by '-', pad five groups.
INSERT INTO sbtest1 (id, k, c, pad)
SELECT i,
       1 + floor(random() * rows)::integer,
       rtrim(repeat(lpad(floor(random() * 1e11)::bigint::text, 11, '0') || '-', 10), '-'),
       rtrim(repeat(lpad(floor(random() * 1e11)::bigint::text, 11, '0') || '-', 5), '-')
FROM (SELECT 10000 * count(*) AS rows FROM pgbench_branches) AS size,
     generate_series(1, size.rows) AS i;
CREATE INDEX k_1 ON sbtest1 (k);
ANALYZE sbtest1;
