"""One inference per field: each reads the observations of the probes meant for it and returns
a ``Finding`` (decided with evidence, or undecided with the reason)."""
