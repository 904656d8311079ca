"""The closed vocabularies of stream import and export formats, in a module of their own: the
command line builds its ``--format`` options from them without loading the importers and
exporters (pyarrow, rdflib)."""

from __future__ import annotations

from enum import StrEnum


class StreamFormat(StrEnum):
    """What ``rsp stream import`` reads."""

    N3T = "n3t"
    CSRBENCH_TTL = "csrbench-ttl"
    TRIG = "trig"
    CITYBENCH = "citybench"
    NTRIPLES = "ntriples"
    TURTLE = "turtle"


# formats that hold static data (no timestamps), imported as a static table
STATIC_FORMATS = {StreamFormat.NTRIPLES, StreamFormat.TURTLE}


class ExportFormat(StrEnum):
    """What ``rsp stream export`` writes."""

    N3T = "n3t"
    TRIG = "trig"
