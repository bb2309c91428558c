SELECT :nope::int IS NULL AS a;
