\set x abs(least())
