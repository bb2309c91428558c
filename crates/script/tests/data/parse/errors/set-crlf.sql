\set x 1 +
