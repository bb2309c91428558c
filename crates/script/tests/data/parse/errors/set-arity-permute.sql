\set x permute(1)
