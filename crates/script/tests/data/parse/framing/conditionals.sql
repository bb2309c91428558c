\if 1
SELECT 1;
\elif 0
SELECT 2;
\else
SELECT 3;
\endif
