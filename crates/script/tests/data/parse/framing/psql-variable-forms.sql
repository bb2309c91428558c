\if 0
SELECT :'v;' AS a; SELECT :"w;" ; SELECT :'v ;';
SELECT :{?v};
\endif
SELECT 5;
