\set x hash_fnv1a(1, 2, 3)
