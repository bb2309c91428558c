-- only a comment
   
	-- another
