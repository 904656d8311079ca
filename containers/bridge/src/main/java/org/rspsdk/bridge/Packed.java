package org.rspsdk.bridge;

import java.nio.charset.StandardCharsets;

/**
 * The packed batch format: UTF-8 text, one triple per line, {@code <t_app_ms> <s> <p> <o>\n},
 * terms in N-Triples syntax (s and p never contain a space; o is the rest of the line).
 *
 * <p>Parsing works on the bytes directly and makes exactly the three term strings per triple,
 * because the throughput of every JVM runtime is bounded by this loop.
 */
public final class Packed {
  private Packed() {}

  /** Parse {@code buf[off, off+len)} and hand every triple to {@code sink}; returns the count. */
  public static int forEach(byte[] buf, int off, int len, TripleSink sink) throws Exception {
    final int end = off + len;
    int i = off;
    int n = 0;
    while (i < end) {
      final int lineStart = i;
      // t_app_ms: optional '-' then digits, then one space
      boolean neg = false;
      if (buf[i] == '-') {
        neg = true;
        i++;
      }
      long t = 0;
      int digits = 0;
      while (i < end && buf[i] >= '0' && buf[i] <= '9') {
        t = t * 10 + (buf[i] - '0');
        i++;
        digits++;
      }
      if (digits == 0 || i >= end || buf[i] != ' ') {
        throw malformed(buf, lineStart, end, n, "a timestamp (integer ms) followed by a space");
      }
      i++;
      final int sStart = i;
      while (i < end && buf[i] != ' ' && buf[i] != '\n') i++;
      if (i >= end || buf[i] != ' ' || i == sStart) {
        throw malformed(buf, lineStart, end, n, "a subject term followed by a space");
      }
      final int sEnd = i++;
      final int pStart = i;
      while (i < end && buf[i] != ' ' && buf[i] != '\n') i++;
      if (i >= end || buf[i] != ' ' || i == pStart) {
        throw malformed(buf, lineStart, end, n, "a predicate term followed by a space");
      }
      final int pEnd = i++;
      final int oStart = i;
      while (i < end && buf[i] != '\n') i++;
      if (i == oStart) {
        throw malformed(buf, lineStart, end, n, "an object term");
      }
      final int oEnd = i;
      i++; // skip '\n' (a missing final newline is accepted)
      sink.accept(
          neg ? -t : t,
          new String(buf, sStart, sEnd - sStart, StandardCharsets.UTF_8),
          new String(buf, pStart, pEnd - pStart, StandardCharsets.UTF_8),
          new String(buf, oStart, oEnd - oStart, StandardCharsets.UTF_8));
      n++;
    }
    return n;
  }

  /** Number of triples (lines) in a packed batch, without parsing the terms. */
  public static int count(byte[] buf, int off, int len) {
    int n = 0;
    for (int i = off; i < off + len; i++) if (buf[i] == '\n') n++;
    if (len > 0 && buf[off + len - 1] != '\n') n++;
    return n;
  }

  private static IllegalArgumentException malformed(
      byte[] buf, int lineStart, int end, int index, String expected) {
    int e = lineStart;
    while (e < end && buf[e] != '\n' && e - lineStart < 200) e++;
    String text = new String(buf, lineStart, e - lineStart, StandardCharsets.UTF_8);
    return new IllegalArgumentException(
        "packed batch line " + (index + 1) + ": expected " + expected + ", got '" + text + "'");
  }
}
