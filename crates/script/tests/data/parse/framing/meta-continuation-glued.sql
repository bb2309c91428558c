\sleep 1\
us
SELECT 1;
