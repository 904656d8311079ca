package org.rspsdk.bridge;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * Where drivers put result events; {@code poll} drains it as packed bytes.
 *
 * <p>Engines call their observers on their own threads, so {@link #append} is thread-safe and
 * stamps each event with {@code System.nanoTime()} (CLOCK_MONOTONIC on Linux, the clock the
 * Python side reads too) at the moment the driver received it. Each event is serialised at once
 * to one JSON line, {@code {"query","t_sys_ns","t_app_ms","vars","rows"}}, so the buffer holds
 * bytes, not engine objects, and draining is one array copy.
 */
public final class ResultBuffer {
  private final Object lock = new Object();
  private ByteArrayOutputStream out = new ByteArrayOutputStream(1 << 16);
  private long events;

  /**
   * Record one result event (an empty {@code rows} is an empty relation).
   *
   * @param tAppMs application time the engine gave the event, or null when it gives none
   * @param rows one array per row, terms in N-Triples text aligned with {@code vars}; null = unbound
   */
  public void append(String query, Long tAppMs, String[] vars, Iterable<String[]> rows) {
    final long tSys = System.nanoTime();
    StringBuilder sb = new StringBuilder(256);
    sb.append("{\"query\":");
    Json.quote(query, sb);
    sb.append(",\"t_sys_ns\":").append(tSys);
    sb.append(",\"t_app_ms\":").append(tAppMs == null ? "null" : tAppMs.toString());
    sb.append(",\"vars\":[");
    for (int i = 0; i < vars.length; i++) {
      if (i > 0) sb.append(',');
      Json.quote(vars[i], sb);
    }
    sb.append("],\"rows\":[");
    boolean firstRow = true;
    for (String[] row : rows) {
      if (!firstRow) sb.append(',');
      firstRow = false;
      sb.append('[');
      for (int i = 0; i < row.length; i++) {
        if (i > 0) sb.append(',');
        if (row[i] == null) sb.append("null");
        else Json.quote(row[i], sb);
      }
      sb.append(']');
    }
    sb.append("]}\n");
    byte[] line = sb.toString().getBytes(StandardCharsets.UTF_8);
    synchronized (lock) {
      out.write(line, 0, line.length);
      events++;
    }
  }

  /** Everything appended since the last drain, as UTF-8 JSON lines (empty array when none). */
  public byte[] drain() {
    synchronized (lock) {
      if (out.size() == 0) return new byte[0];
      byte[] bytes = out.toByteArray();
      out = new ByteArrayOutputStream(1 << 16);
      return bytes;
    }
  }

  /** Events appended since the buffer was created (for stats). */
  public long events() {
    synchronized (lock) {
      return events;
    }
  }
}
