\if 1
\endif x
