\set x ()
