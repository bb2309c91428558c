\set r random(1, 1000000)
\shell echo :client_id S1 :r >&2
