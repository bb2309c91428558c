\set x case(1)
