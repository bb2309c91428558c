SELECT 1 AS a;
\gset
SELECT 2 AS b \gset p_
SELECT 3 AS c

-- comment
\aset
