\if
