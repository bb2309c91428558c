\sleep :x minutes
