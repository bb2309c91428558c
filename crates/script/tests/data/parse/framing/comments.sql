-- leading comment
  -- another ; one

SELECT 1 -- trailing ; comment
 , 2 /* block ; /* nested ; */ still ; */ AS b;
/* only a block comment */ SELECT 3;
-- comment at the end
