\set x abs(,,1)
