  \set x 1
	SELECT 1;
