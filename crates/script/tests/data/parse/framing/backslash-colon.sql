SELECT '\:x' AS a, 1 \:\: text AS b;
