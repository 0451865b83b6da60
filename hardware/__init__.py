"""Frame sources, buttons and the clock: the edges of dicepad, each with a first-class fake."""
