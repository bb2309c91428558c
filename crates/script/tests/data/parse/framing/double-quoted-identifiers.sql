SELECT 1 AS ";", 2 AS "a"";b";
