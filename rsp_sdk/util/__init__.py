"""Small helpers with no domain knowledge."""
