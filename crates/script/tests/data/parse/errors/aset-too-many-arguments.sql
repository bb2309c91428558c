SELECT 1;
\aset a b
