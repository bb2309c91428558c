\set x foo + 1
