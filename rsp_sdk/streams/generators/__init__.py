"""Reproducible stream generators: same parameters and seed give byte-identical Parquet files."""
