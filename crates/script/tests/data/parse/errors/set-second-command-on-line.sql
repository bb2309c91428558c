\set x 1 \set y 2
