\set x case when 1 then 2 else 3 else 4 end
