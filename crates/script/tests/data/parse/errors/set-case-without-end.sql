\set x case when 1 then 2
