SELECT 1;
\else
