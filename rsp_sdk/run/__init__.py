"""Running an engine: feeder (pacing), recorder (self-describing run directory), sampler
(process and JVM numbers every 500 ms) and the runner that ties them to an EngineSession."""
