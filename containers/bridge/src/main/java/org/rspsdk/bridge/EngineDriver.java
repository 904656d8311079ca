package org.rspsdk.bridge;

import java.util.Map;

/**
 * The verbs every JVM engine driver implements: the Java side of the driver contract documented
 * in rsp_sdk/runtime/base.py (that docstring is the single source of truth; keep both in step).
 *
 * <p>A driver is glue between one engine's own API and these verbs. It never talks to Python:
 * {@link Bridge} calls it, whichever runtime (JPype in a worker process, py4j bridge server,
 * Docker) carries the JVM. Verbs are called one at a time (the bridge serialises them), except
 * {@link #stats()}, which may be called from another thread while a long push runs.
 *
 * <p>Results are not returned from verbs: the driver appends each result event (one relation or
 * one observer callback) to the {@link ResultBuffer} it receives in {@link #open}; the bridge
 * drains that buffer on {@code poll}. Nothing crosses the bridge per row.
 */
public interface EngineDriver {

  /**
   * Create the engine. {@code configJson} is adapter-specific JSON ({@link Json#parse} reads
   * it); {@code workdir} is a fresh directory the engine may write to.
   */
  void open(String configJson, String workdir, ResultBuffer results) throws Exception;

  /** Load background data (an RDF file) into the named graph {@code graphIri}. */
  default void loadStatic(String graphIri, String path) throws Exception {
    throw new UnsupportedOperationException("this engine does not support static data");
  }

  void registerStream(String iri) throws Exception;

  /**
   * Register a query in the engine's own dialect under {@code name} (results carry that name).
   * A query the engine rejects must throw, with the engine's own message.
   */
  void registerQuery(String name, String text) throws Exception;

  /**
   * Push a packed batch: UTF-8 lines {@code <t_app_ms> <s> <p> <o>\n} in {@code
   * packed[offset, offset+length)}. {@link Packed#forEach} parses it. The array may be reused by
   * the bridge after this call returns: copy what you keep.
   */
  void push(String streamIri, byte[] packed, int offset, int length) throws Exception;

  /** Application time has reached {@code tAppMs}: close the windows that end by then. */
  default void advanceTime(long tAppMs) throws Exception {}

  /** Engine-specific numbers added to the JVM stats (heap, GC, threads) the bridge reports. */
  default Map<String, Object> stats() {
    return Map.of();
  }

  /** Stop the engine and release everything it holds (threads, files, sockets). */
  void close() throws Exception;
}
