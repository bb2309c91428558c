SELECT 1;

\aset


\aset
