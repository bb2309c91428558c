SELECT 1e-- not a comment \; 2;
\if 0
SELECT .5e'\';
\endif
\else
