SELECT 'a'
'b;' AS c;
SELECT E'x'
  -- comment
'\';y' AS d;
