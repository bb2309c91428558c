\set u1 random(1, 1000000)
\set u2 random(-5, 5)
\set u3 random(1, 1)
\set u4 random(0, 9223372036854775806)
\set u5 random(-9223372036854775806, 0)
\set u6 random(1, 100000 * :scale)
\shell echo :client_id U :u1 :u2 :u3 :u4 :u5 :u6 >&2
\set g1 random_gaussian(1, 1000, 2.5)
\set g2 random_gaussian(-1000000, 1000000, 10)
\set g3 random_gaussian(1, 3, 2)
\set e1 random_exponential(1, 1000, 5.0)
\set e2 random_exponential(1, 1000000000, 0.001)
\set e3 random_exponential(-10, 10, 20)
\shell echo :client_id G :g1 :g2 :g3 :e1 :e2 :e3 >&2
\set z1 random_zipfian(1, 1000, 1.07)
\set z2 random_zipfian(1, 100000, 2.5)
\set z3 random_zipfian(1, 1000000, 1.001)
\set z4 random_zipfian(7, 7, 1.5)
\set z5 random_zipfian(1, 9223372036854775806, 999)
\shell echo :client_id Z :z1 :z2 :z3 :z4 :z5 >&2
\set h1 hash(:u1)
\set h2 hash_fnv1a(:u4)
\set h3 hash_murmur2(:u2, :client_id)
\set h4 hash(:g2, :default_seed + 1)
\shell echo :client_id H :h1 :h2 :h3 :h4 >&2
\set p1 permute(:u1, 1000)
\set p2 permute(:u4, 1000000007, :default_seed)
\set p3 permute(:u2, 3)
\set p4 permute(:u2, 2, :u1)
\set p5 permute(:u5, 9223372036854775807)
\shell echo :client_id P :p1 :p2 :p3 :p4 :p5 >&2
\set o1 random(1, 100) > random(1, 100)
\set o2 -random(1, 10) * 100 + random(1, 10)
\set o3 case when random(0, 1) = 1 then random(1, 10) else random(100, 110) end
\set o4 greatest(random(1, 10), random(1, 10) * 10, random(1, 10) * 100)
\set o5 random(1, 10) >= random(1, 10) and random(0, 1) = 1
\shell echo :client_id O :o1 :o2 :o3 :o4 :o5 >&2
\set d1 double(random(1, 1000)) / 7
\set d2 sqrt(random(1, 1000)) + ln(random(1, 1000)) * exp(random(1, 10) / 10.0)
\set d3 pow(random(1, 1000), 1.0 / 3)
\shell echo :client_id D :d1 :d2 :d3 :default_seed :random_seed >&2
