\set x :
