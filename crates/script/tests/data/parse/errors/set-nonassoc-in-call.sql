\set x abs(1 <= 2 = 3)
