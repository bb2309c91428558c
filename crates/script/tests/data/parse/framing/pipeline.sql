\startpipeline
SELECT 1;
SELECT 2;
\endpipeline
