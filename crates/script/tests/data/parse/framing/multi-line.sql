SELECT 1
  + 2
  AS three
;
SELECT
4;
