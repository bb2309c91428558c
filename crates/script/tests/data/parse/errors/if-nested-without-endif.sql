\if 1
\if 2
\endif
