SELECT 1
  AS a;
\set x 1
SELECT 2;
