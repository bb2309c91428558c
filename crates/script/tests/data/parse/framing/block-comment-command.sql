SELECT 1;
/* only a comment ; */
\set x 1
SELECT 2 +-- dash comment ; after an operator
 3;
