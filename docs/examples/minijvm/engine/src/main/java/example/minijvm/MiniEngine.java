package example.minijvm;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * minijvm: a tiny RDF stream engine in plain Java, with the API a Java engine typically has
 * (register a stream, register a query with an observer, put timestamped triples). It knows
 * nothing of rsp-sdk: the adapter's driver class adapts this API to the SDK's verbs.
 *
 * <p>Its semantics (what the adapter declares as its SECRET profile), the same as minirsp's:
 * windows [k·STEP, k·STEP+RANGE) from t0 = 0 in application time; a window is reported when
 * application time reaches its close (a triple at the close time, or {@link #advanceTime}), only
 * if it holds triples (non-empty content), as the whole result (Rstream), including an empty
 * result when nothing matches. A query is one window over one stream, a projection and a basic
 * graph pattern (triple patterns joined on shared variables; terms in N-Triples, {@code ?vars}).
 */
public final class MiniEngine {
  /** Receives each window's result: close time (ms), variable names, one row per solution. */
  public interface Observer {
    void onResult(long closeMs, List<String> vars, List<String[]> rows);
  }

  private final Map<String, List<Query>> streams = new HashMap<>();

  public void registerStream(String iri) {
    streams.putIfAbsent(iri, new ArrayList<>());
  }

  /** Registers a query; {@code where} holds {s, p, o} patterns. */
  public void registerQuery(
      String stream, long rangeMs, long stepMs, List<String> select, List<String[]> where,
      Observer observer) {
    List<Query> queries = streams.get(stream);
    if (queries == null) {
      throw new IllegalArgumentException("minijvm: stream <" + stream + "> is not registered");
    }
    if (rangeMs <= 0 || stepMs <= 0 || where.isEmpty()) {
      throw new IllegalArgumentException("minijvm: range and step must be > 0, where non-empty");
    }
    queries.add(new Query(rangeMs, stepMs, select, where, observer));
  }

  public void put(String stream, long tMs, String s, String p, String o) {
    List<Query> queries = streams.get(stream);
    if (queries == null) {
      throw new IllegalArgumentException("minijvm: stream <" + stream + "> is not registered");
    }
    for (Query q : queries) q.put(tMs, new String[] {s, p, o});
  }

  /** Application time reached {@code tMs}: report every window closing at or before it. */
  public void advanceTime(long tMs) {
    for (List<Query> queries : streams.values()) {
      for (Query q : queries) q.advance(tMs);
    }
  }

  private static final class Query {
    private final long range;
    private final long step;
    private final List<String> select;
    private final List<String[]> where;
    private final Observer observer;
    private long open; // opening of the oldest window not yet reported
    private final List<Object[]> elements = new ArrayList<>(); // {Long t, String[] triple}

    Query(long range, long step, List<String> select, List<String[]> where, Observer observer) {
      this.range = range;
      this.step = step;
      this.select = select;
      this.where = where;
      this.observer = observer;
    }

    void put(long t, String[] triple) {
      advance(t);
      if (t >= open) elements.add(new Object[] {t, triple});
    }

    void advance(long t) {
      while (open + range <= t) {
        if (elements.isEmpty()) { // nothing buffered: skip the empty windows at once
          open = Math.max(open, Math.floorDiv(t - range, step) * step + step);
          return;
        }
        long close = open + range;
        List<String[]> content = new ArrayList<>();
        for (Object[] e : elements) {
          long ts = (Long) e[0];
          if (open <= ts && ts < close) content.add((String[]) e[1]);
        }
        if (!content.isEmpty()) observer.onResult(close, select, evaluate(content));
        open += step;
        elements.removeIf(e -> (Long) e[0] < open);
      }
    }

    private List<String[]> evaluate(List<String[]> content) {
      List<Map<String, String>> solutions = new ArrayList<>();
      solutions.add(new LinkedHashMap<>());
      for (String[] pattern : where) {
        List<Map<String, String>> next = new ArrayList<>();
        for (Map<String, String> solution : solutions) {
          for (String[] triple : content) {
            Map<String, String> joined = match(pattern, triple, solution);
            if (joined != null) next.add(joined);
          }
        }
        solutions = next;
      }
      List<String[]> rows = new ArrayList<>();
      for (Map<String, String> solution : solutions) {
        String[] row = new String[select.size()];
        for (int i = 0; i < row.length; i++) row[i] = solution.get(select.get(i));
        rows.add(row);
      }
      return rows;
    }

    /** {@code bound} extended by one pattern matched against one triple, or null. */
    private static Map<String, String> match(
        String[] pattern, String[] triple, Map<String, String> bound) {
      Map<String, String> out = new LinkedHashMap<>(bound);
      for (int i = 0; i < 3; i++) {
        String term = pattern[i];
        if (term.startsWith("?")) {
          String had = out.putIfAbsent(term.substring(1), triple[i]);
          if (had != null && !had.equals(triple[i])) return null;
        } else if (!term.equals(triple[i])) {
          return null;
        }
      }
      return out;
    }
  }
}
