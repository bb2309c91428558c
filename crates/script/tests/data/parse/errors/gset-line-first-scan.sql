

\gset
