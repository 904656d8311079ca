"""Figure builders (matplotlib, no pyplot): each takes tables, returns a written FigureRef."""
