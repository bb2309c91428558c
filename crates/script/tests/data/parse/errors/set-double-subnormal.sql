\set x 4.9e-324
