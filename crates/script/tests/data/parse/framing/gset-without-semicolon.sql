SELECT 1 AS one, 'x' AS two \gset
SELECT 3;
