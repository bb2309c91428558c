\set x greatest(,)
