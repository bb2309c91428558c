SELECT 'é;' AS "ü;", :é AS x;
