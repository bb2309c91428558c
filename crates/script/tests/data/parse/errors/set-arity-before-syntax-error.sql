\set x abs(1, 2) )
