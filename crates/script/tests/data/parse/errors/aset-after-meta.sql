\set x 1
\aset p_
