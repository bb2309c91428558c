SELECT :x::int + 1 AS a, '::x' AS b, ':x' AS c, :x ::text AS d /* :x */;
-- :x in a comment line
SELECT 1 AS ":x";
