\set x 1e400
