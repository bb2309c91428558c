\sleep -x
