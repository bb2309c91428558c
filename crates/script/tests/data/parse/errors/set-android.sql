\set x android(1)
