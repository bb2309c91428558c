\sleep 1 ms 2
