"""Runtimes carry an engine driver: in-process JVM (jpype), JVM subprocess (py4j), container
(docker) or any program speaking JSON lines (subprocess). One interface, interchangeable per run."""
