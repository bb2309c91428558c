\set x NOT 1 >= 2 > 3
