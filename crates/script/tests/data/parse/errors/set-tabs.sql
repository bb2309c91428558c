\set	x	1	+	
