\set r random(1000001, 2000000)
\shell echo :client_id S2 :r >&2
