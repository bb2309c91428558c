\set x 1.5e
