\set x case 1 end
