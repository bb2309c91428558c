\sleep x
