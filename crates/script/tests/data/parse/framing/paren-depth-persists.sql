\if 0
SELECT (1 \gset
\endif
SELECT 2; SELECT 3;
\if 1
\endif
