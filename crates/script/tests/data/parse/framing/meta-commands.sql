\set x 1 + \
  2
\SET y :x * 2
\ set z 0
\sleep 0
\sleep 1 ms
\Sleep 10us
\sleep - MS
\sleep :v us
\shell true
\setshell w echo 5
SELECT 1;
