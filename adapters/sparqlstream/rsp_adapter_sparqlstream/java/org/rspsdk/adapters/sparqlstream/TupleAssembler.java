package org.rspsdk.adapters.sparqlstream;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Gathers the triples of one application time into rows (see {@link TupleMapping}).
 *
 * <p>A row is complete only when time moves on: the triples of one SRBench observation arrive in
 * any order within their timestamp, possibly split across two pushed batches. So rows stay here
 * until a later timestamp (or {@code advance_time}) releases them, and are then sent to Esper as
 * events at their own time.
 */
final class TupleAssembler {
  /** One tuple to send: its table, its time and its column values (typed). */
  static final class Row {
    final String table;
    final long time;
    final Map<String, Object> values = new LinkedHashMap<>();

    Row(String table, long time) {
      this.table = table;
      this.time = time;
    }
  }

  private final TupleMapping mapping;
  private final Map<String, List<TupleMapping.TriplesMap>> byStream = new LinkedHashMap<>();
  private final Map<String, Row> pending = new LinkedHashMap<>();
  private long pendingTime = Long.MIN_VALUE;
  long triples;
  long mapped;
  long unmapped;
  long rows;
  long conflicts;

  TupleAssembler(TupleMapping mapping) {
    this.mapping = mapping;
  }

  long pendingTime() {
    return pendingTime;
  }

  boolean hasPending() {
    return !pending.isEmpty();
  }

  /**
   * Add one triple at time {@code t}; when {@code t} is later than the pending rows' time, those
   * rows are returned first (completed), else an empty list.
   */
  List<Row> add(String stream, long t, String s, String p, String o) {
    List<Row> done = List.of();
    if (t != pendingTime) {
      done = release();
      pendingTime = t;
    }
    triples++;
    List<TupleMapping.TriplesMap> maps =
        byStream.computeIfAbsent(stream, mapping::forStream);
    boolean any = false;
    for (TupleMapping.TriplesMap tm : maps) {
      Map<String, String> values = TupleMapping.apply(tm, mapping.byId, s, p, o);
      if (values == null) continue;
      any = true;
      String key = TupleMapping.keyOf(tm, values);
      Row row = pending.get(key);
      if (row == null) {
        row = new Row(tm.table, t);
        pending.put(key, row);
      }
      Map<String, Class<?>> types = mapping.tables.get(tm.table);
      for (Map.Entry<String, String> e : values.entrySet()) {
        Class<?> type = types.getOrDefault(e.getKey(), String.class);
        Object v = TupleMapping.convert(tm.table, e.getKey(), type, e.getValue());
        Object old = row.values.put(e.getKey(), v);
        if (old != null && !old.equals(v)) conflicts++;
      }
    }
    if (any) mapped++;
    else unmapped++;
    return done;
  }

  /** The pending rows, completed (time moved on or the input ended). */
  List<Row> release() {
    if (pending.isEmpty()) return List.of();
    List<Row> out = new ArrayList<>(pending.values());
    pending.clear();
    rows += out.size();
    return out;
  }
}
