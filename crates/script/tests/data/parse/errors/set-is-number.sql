\set x 1 is 2
