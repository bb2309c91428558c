\set x TRUE(1)
