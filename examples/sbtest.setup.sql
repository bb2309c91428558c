-- Setup for the sysbench-style OLTP examples (oltp-read-write.sql, oltp-read-only.sql,
-- oltp-write-only.sql): table sbtest1 as sysbench's oltp_common.lua creates it (id
-- primary key, secondary index on k, char(120) c and char(60) pad), with 10,000 rows
-- per scale unit (sysbench's default --table-size). Run once with psql; it needs no
-- pgbench table, so -i is optional:
--
--   psql -d bench -f examples/sbtest.setup.sql                 -- 10,000 rows
--   psql -d bench -v scale=100 -f examples/sbtest.setup.sql    -- 1,000,000 rows
--
-- then give the benchmark the same scale (-s 100), which the scripts read as :scale.
-- Rerunning it drops and refills the table, undoing what earlier runs changed.
\if :{?scale}
\else
\set scale 1
\endif
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
       1 + floor(random() * (10000 * :scale))::integer,
       rtrim(repeat(lpad(floor(random() * 1e11)::bigint::text, 11, '0') || '-', 10), '-'),
       rtrim(repeat(lpad(floor(random() * 1e11)::bigint::text, 11, '0') || '-', 5), '-')
FROM generate_series(1, 10000 * :scale) AS i;
CREATE INDEX k_1 ON sbtest1 (k);
VACUUM ANALYZE sbtest1;
