\sleep 1 xs\
