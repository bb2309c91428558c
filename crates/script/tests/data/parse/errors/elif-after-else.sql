\if 1
\elif 0
\else
\elif 1
\endif
