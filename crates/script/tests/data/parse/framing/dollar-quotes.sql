SELECT $$;$$ AS a, $tag$ ; $x$ ; $tag$ AS b, $_1$;$_1$ AS c;
SELECT $q$
;
$q$ AS d;
