\sleep 10ms s
