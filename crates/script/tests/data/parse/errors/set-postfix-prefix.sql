\set x - is null
