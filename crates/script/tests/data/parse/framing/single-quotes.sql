SELECT ';' AS a, 'it''s;' AS b, E'a\';b' AS c, 'x\' AS d;
SELECT 'multi
line;' AS e;
