\sleep xy\
ms
