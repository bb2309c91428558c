SELECT B'101' IS NULL AS a, X'1F' IS NULL AS b, U&'d\0061t\+000061;' AS c, n'x;' AS d, u&"x;" FROM (SELECT 1 AS "x;") s;
