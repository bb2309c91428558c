\set x 1e-400
