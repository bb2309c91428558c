\if 1
\else x
\endif
