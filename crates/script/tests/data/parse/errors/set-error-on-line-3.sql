SELECT 1;
-- comment
\set x )
SELECT 2;
