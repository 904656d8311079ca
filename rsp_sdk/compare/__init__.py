"""Comparisons of engine outputs with the oracle and with each other.

CSRBench verdict, YABench per-window metrics, LSBench mismatch (see ../shared/METRICS.md).
"""
