package org.rspsdk.bridge;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * One engine driver behind the verbs of the driver contract, for every JVM runtime: JPype calls
 * it in-process, {@link BridgeServer} exposes it over py4j and the data socket.
 *
 * <p>Verbs that touch the engine are serialised on one lock (engines are rarely thread-safe);
 * {@link #poll} only drains the thread-safe {@link ResultBuffer} and {@link #stats} only reads
 * MXBeans, so neither waits for a long push.
 */
public final class Bridge {
  private final EngineDriver driver;
  private final ResultBuffer results = new ResultBuffer();
  private final Object lock = new Object();
  private volatile long batches;
  private volatile long bytes;
  private volatile boolean closed;
  private byte[] scratch = new byte[1 << 20];

  public Bridge(String driverClass) throws Exception {
    Class<?> cls = Class.forName(driverClass, true, Thread.currentThread().getContextClassLoader());
    if (!EngineDriver.class.isAssignableFrom(cls)) {
      throw new IllegalArgumentException(
          driverClass + " does not implement " + EngineDriver.class.getName());
    }
    this.driver = (EngineDriver) cls.getDeclaredConstructor().newInstance();
  }

  public Bridge(EngineDriver driver) {
    this.driver = driver;
  }

  public EngineDriver driver() {
    return driver;
  }

  public void open(String configJson, String workdir) throws Exception {
    synchronized (lock) {
      driver.open(configJson, workdir, results);
    }
  }

  public void loadStatic(String graphIri, String path) throws Exception {
    synchronized (lock) {
      driver.loadStatic(graphIri, path);
    }
  }

  public void registerStream(String iri) throws Exception {
    synchronized (lock) {
      driver.registerStream(iri);
    }
  }

  public void registerQuery(String name, String text) throws Exception {
    synchronized (lock) {
      driver.registerQuery(name, text);
    }
  }

  public void push(String streamIri, byte[] packed) throws Exception {
    push(streamIri, packed, 0, packed.length);
  }

  public void push(String streamIri, byte[] packed, int offset, int length) throws Exception {
    synchronized (lock) {
      driver.push(streamIri, packed, offset, length);
      batches++;
      bytes += length;
    }
  }

  /**
   * Push the first {@code length} bytes of a (direct) ByteBuffer. The JPype worker maps a shared
   * memory segment the parent wrote the batch into and hands it over without a copy; one bulk
   * copy here into a reused array is far cheaper than building a fresh byte[] from Python.
   */
  public void pushBuffer(String streamIri, ByteBuffer packed, int length) throws Exception {
    synchronized (lock) {
      int len = length;
      if (scratch.length < len) scratch = new byte[Math.max(len, scratch.length * 2)];
      ByteBuffer view = packed.duplicate();
      view.clear();
      view.get(scratch, 0, len);
      driver.push(streamIri, scratch, 0, len);
      batches++;
      bytes += len;
    }
  }

  public void advanceTime(long tAppMs) throws Exception {
    synchronized (lock) {
      driver.advanceTime(tAppMs);
    }
  }

  public byte[] poll() {
    return results.drain();
  }

  /** JVM MXBean numbers, bridge counters and the driver's own numbers, as a JSON object. */
  public String stats() {
    Map<String, Object> m = new LinkedHashMap<>(JvmStats.snapshot());
    m.put("batches", batches);
    m.put("bytes", bytes);
    m.put("result_events", results.events());
    try {
      m.putAll(driver.stats());
    } catch (RuntimeException ex) {
      m.put("driver_stats_error", ex.toString());
    }
    return Json.write(m);
  }

  public void close() throws Exception {
    synchronized (lock) {
      if (closed) return;
      closed = true;
      driver.close();
    }
  }

  /** "Class: message" of an exception and its causes, for error replies. */
  public static String describe(Throwable t) {
    StringBuilder sb = new StringBuilder(t.toString());
    Throwable c = t.getCause();
    int depth = 0;
    while (c != null && c != t && depth++ < 5) {
      sb.append("; caused by ").append(c);
      c = c.getCause();
    }
    return sb.toString();
  }

  public static String trace(Throwable t) {
    StringWriter w = new StringWriter();
    t.printStackTrace(new PrintWriter(w));
    return w.toString();
  }
}
