SELECT :x::int + :y::int AS a, :x::int AS b, 2::int AS c;
