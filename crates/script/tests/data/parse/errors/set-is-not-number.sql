\set x 1 is not 2
