\set x ABS()
