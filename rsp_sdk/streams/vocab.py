"""IRIs of the small vocabularies streams are described with."""

SR = "http://www.streamreasoning.org/schema/benchmark#"
SR_HAS_TIMESTAMP = SR + "hasTimestamp"  # CSRBench/YABench TriG: <graph> sr:hasTimestamp "ms"
SR_GRAPHS_LIST = SR + "graphsList"  # the graph that holds the timestamps in CSRBench TriG
PROV_GENERATED_AT = "http://www.w3.org/ns/prov#generatedAtTime"
RSP = "https://w3id.org/rsp-sdk#"
RSP_IN_STREAM = RSP + "inStream"  # <graph> rsp:inStream <stream IRI>, written by our exporter
XSD_LONG = "http://www.w3.org/2001/XMLSchema#long"
XSD_DATETIME = "http://www.w3.org/2001/XMLSchema#dateTime"
# the stream IRI of imports and generators not told another (``--stream``)
DEFAULT_STREAM_IRI = "http://ex.org/streams/test"
