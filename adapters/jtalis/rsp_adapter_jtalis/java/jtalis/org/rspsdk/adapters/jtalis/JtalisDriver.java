package org.rspsdk.adapters.jtalis;

import com.jtalis.core.JtalisContextImpl;
import com.jtalis.core.config.BasicConfig;
import com.jtalis.core.event.AbstractJtalisEventProvider;
import com.jtalis.core.event.EtalisEvent;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.rspsdk.bridge.EngineDriver;
import org.rspsdk.bridge.Json;
import org.rspsdk.bridge.Packed;
import org.rspsdk.bridge.ResultBuffer;

/**
 * Driver of JTALIS, ETALIS' Java API: a {@link JtalisContextImpl} over SWI-Prolog 9 ({@code
 * swipl --traditional}, a subprocess of this JVM through InterProlog, see {@link
 * SwiInterprologWrapper}).
 *
 * <p>ETALIS is the folder {@code rsp engines add jtalis} took (the same sources the etalis
 * adapter runs, not the older copy bundled in the JTALIS jar); JTALIS consults its {@code
 * src/ep_sparql/ep_sparql.P}, then the shared {@code rsp_ep_sparql.pl} and {@code
 * rsp_jtalis.pl} (resources on the classpath). A query is EP-SPARQL compiled by the shared
 * Prolog into rules deriving {@code rsp_result(Index, Values)}; an event trigger on {@code
 * rsp_result/2} makes ETALIS notify JTALIS of each derivation, and JTALIS hands it to the
 * registered output provider, which groups the rows by the input event that completed them
 * (the end timestamp) into one result event per query, at that event's application time.
 *
 * <p>Input goes through {@code pushEvent}: JTALIS queues it and its execution thread runs
 * {@code event(rdf(S,P,O), [T, T])}. A push returns once everything it caused has reached the
 * output provider: after the batch it pushes a marker event {@code rsp_barrier(N)} (also
 * triggered) and waits for it to come out.
 */
public final class JtalisDriver implements EngineDriver {
  private static final long BARRIER_TIMEOUT_S = Long.getLong("rsp.jtalis.barrier_timeout_s", 600);

  private JtalisContextImpl ctx;
  private SwiInterprologWrapper engine;
  private ResultBuffer results;
  private final Map<String, Boolean> streams = new HashMap<>();
  private final Map<Integer, Query> queries = new HashMap<>();
  // the streams registered queries read (null: every stream); see reads()
  private Set<String> read;
  private final Map<String, String> terms = new HashMap<>();
  private final Output output = new Output();
  private long seq;
  private long lastMs;
  private long events;
  private long barriers;
  private long pushNs;

  private record Query(String name, String[] vars) {}

  @Override
  public void open(String configJson, String workdir, ResultBuffer results) throws Exception {
    this.results = results;
    Map<String, Object> config =
        configJson == null || configJson.isBlank() ? Map.of() : Json.parseObject(configJson);
    String policy = String.valueOf(config.getOrDefault("consumption_policy", "recent"));
    if (!List.of("recent", "chronological", "unrestricted", "recent_2", "chronological_2")
        .contains(policy)) {
      throw new IllegalArgumentException(
          "consumption_policy must be one of recent, chronological, unrestricted, recent_2, "
              + "chronological_2");
    }
    File dir = new File(workdir);
    File epSparql = EtalisSources.epSparql();
    File shared = resource("rsp_ep_sparql.pl", dir);
    File jtalis = resource("rsp_jtalis.pl", dir);
    String swipl = System.getProperty("rsp.jtalis.swipl", "swipl") + " --traditional";
    engine = new SwiInterprologWrapper(swipl, this::notified);
    engine.addOutputListener(s -> System.err.print("[swipl] " + s));
    ctx = new JtalisContextImpl(new BasicConfig(epSparql), engine);
    if (!ctx.consultFile(shared) || !ctx.consultFile(jtalis)) {
      throw new IllegalStateException("JTALIS could not consult " + shared + " and " + jtalis);
    }
    String[][] flags = {
      {"store_fired_events", "off"},
      {"logging", "off"},
      {"logging_to_file", "off"},
      {"output_temporary_files", "off"},
      {"event_consumption_policy", policy},
    };
    for (String[] f : flags) {
      if (!ctx.setEtalisFlags(f[0], f[1])) {
        throw new IllegalStateException("ETALIS refused the flag " + f[0] + "=" + f[1]);
      }
    }
    ctx.addEventTrigger("rsp_result/2", "rsp_barrier/1");
    ctx.registerOutputProvider(output);
  }

  /** A classpath resource copied into the work dir, for JTALIS to consult. */
  private static File resource(String name, File dir) throws IOException {
    try (InputStream in = JtalisDriver.class.getResourceAsStream("/" + name)) {
      if (in == null) {
        throw new IllegalStateException(
            name + " is not on the classpath (the adapter adds its prolog/ folders)");
      }
      File out = new File(dir, name);
      Files.write(out.toPath(), in.readAllBytes());
      return out;
    }
  }

  /** Called by InterProlog's thread while ETALIS runs an event goal. */
  private void notified(EtalisEvent event) {
    ctx.outputEvent(event); // JTALIS' output queues -> the output provider's thread
  }

  /** Run a goal of the shared Prolog; an error or failure comes back as ETALIS' message. */
  private void call(String goal) {
    engine.notifications().takeError();
    if (!engine.executeGoal("rsp_jtalis_call(" + goal + ")")) {
      String error = engine.notifications().takeError();
      throw new IllegalArgumentException(
          "ETALIS: " + (error != null ? error : "the goal failed: " + goal));
    }
  }

  /**
   * Bytes of facts per goal. InterProlog's Prolog side reads a goal string's length as a
   * signed short and a string over 65 535 bytes not at all (TC_LONGSTRING: {@code newString} in
   * interprolog.pl just fails): past 32 767 bytes it answers "Could not understand objects sent
   * from Java" and stops in SWI's debugger prompt, so one goal with CityBench's 45 703 static
   * triples never answered. Facts are ASCII ({@link PrologTerms#quote}).
   */
  static final int STATIC_GOAL_BYTES = 16_000;

  @Override
  public void loadStatic(String graphIri, String path) throws Exception {
    List<String> facts = new ArrayList<>();
    List<String> lines = Files.readAllLines(new File(path).toPath(), StandardCharsets.UTF_8);
    int bytes = 0;
    for (int n = 0; n < lines.size(); n++) {
      String line = lines.get(n).strip();
      if (line.isEmpty() || line.startsWith("#")) continue;
      String[] t = NTriplesLine.split(line, path, n + 1);
      String fact = "s(" + term(t[0]) + "," + term(t[1]) + "," + term(t[2]) + ")";
      int size = fact.getBytes(StandardCharsets.UTF_8).length + 1;
      if (!facts.isEmpty() && bytes + size > STATIC_GOAL_BYTES) {
        call("rsp_add_static([" + String.join(",", facts) + "], _)");
        facts.clear();
        bytes = 0;
      }
      facts.add(fact);
      bytes += size;
    }
    if (!facts.isEmpty()) call("rsp_add_static([" + String.join(",", facts) + "], _)");
  }

  @Override
  public void registerStream(String iri) {
    streams.put(iri, Boolean.TRUE);
  }

  @Override
  public void registerQuery(String name, String text) throws Exception {
    for (Query q : queries.values()) {
      if (q.name.equals(name)) throw new IllegalArgumentException("query " + name + " exists");
    }
    // the adapter's rendering (JSON: EP-SPARQL, projected variables, WITHIN in ms), or bare
    // EP-SPARQL with the variables read from its SELECT clause, as the etalis shim accepts
    Map<String, Object> spec =
        text.strip().startsWith("{")
            ? Json.parseObject(text)
            : Map.of("ep_sparql", text, "variables", selectVars(text));
    String ep = String.valueOf(spec.get("ep_sparql"));
    long within = spec.get("within_ms") instanceof Number n ? n.longValue() : 0L;
    List<?> vars = spec.get("variables") instanceof List<?> l ? l : List.of();
    Set<String> reads = reads(name, spec.get("stream"));
    int index = queries.size() + 1;
    call("rsp_register_query(" + index + ", " + PrologTerms.quote(ep) + ", " + within + ")");
    String[] names = vars.stream().map(String::valueOf).toArray(String[]::new);
    queries.put(index, new Query(name, names));
    read = reads;
  }

  /**
   * The streams fed to ETALIS once query {@code name} (reading {@code stream}) is registered, as
   * the etalis shim does: ETALIS has one event stream, so the triples of streams no query reads
   * are kept out (they made a UNION branch fire on another stream's triples), and queries on two
   * different streams cannot share it. A bare EP-SPARQL query (no stream named) reads them all.
   */
  private Set<String> reads(String name, Object stream) {
    if (!(stream instanceof String s)) return null;
    if (queries.isEmpty()) return new HashSet<>(Set.of(s));
    if (read == null || read.contains(s)) return read;
    throw new IllegalArgumentException(
        "query " + name + " reads <" + s + ">, another query reads <" + read.iterator().next()
            + ">: ETALIS has one event stream, so queries on different streams cannot run in "
            + "one engine");
  }

  private static List<String> selectVars(String epSparql) {
    List<String> out = new ArrayList<>();
    for (String w : epSparql.split("\\{", 2)[0].split("\\s+")) {
      if (w.startsWith("?") || w.startsWith("$")) out.add(w.substring(1));
    }
    return out;
  }

  @Override
  public void push(String streamIri, byte[] packed, int offset, int length) throws Exception {
    if (!streams.containsKey(streamIri)) {
      throw new IllegalArgumentException("stream " + streamIri + " is not registered");
    }
    if (read != null && !read.contains(streamIri)) return; // no query reads it (see reads())
    long started = System.nanoTime();
    final int[] line = {0};
    Packed.forEach(
        packed,
        offset,
        length,
        (t, s, p, o) -> {
          line[0]++;
          String ps, pp, po;
          try {
            ps = term(s);
            pp = term(p);
            po = term(o);
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                "packed batch line " + line[0] + ": " + e.getMessage(), e);
          }
          if ((line[0] & 63) == 1) { // JTALIS' input queue blocks when full: not on a dead swipl
            String gone = engine.prologExit();
            if (gone != null) throw new IllegalStateException(gone);
          }
          seq++;
          lastMs = t;
          ctx.pushEvent(
              new EtalisEvent(
                  "rdf", Stamps.of(t, seq), Stamps.of(t, seq), new Raw(ps), new Raw(pp),
                  new Raw(po)));
          events++;
        });
    barrier();
    pushNs += System.nanoTime() - started;
    String error = engine.notifications().takeError();
    if (error != null) throw new IllegalStateException("ETALIS: " + error);
  }

  /** Push rsp_barrier(N) and wait until the output provider has seen it. */
  private void barrier() throws InterruptedException {
    long n = ++barriers;
    seq++;
    ctx.pushEvent(new EtalisEvent("rsp_barrier", Stamps.of(lastMs, seq), Stamps.of(lastMs, seq),
        new Raw(Long.toString(n))));
    if (!output.awaitBarrier(n, BARRIER_TIMEOUT_S, engine::prologExit)) {
      throw new IllegalStateException(
          "JTALIS did not deliver the end-of-batch marker within " + BARRIER_TIMEOUT_S
              + " s (is swipl still running? see the engine log)");
    }
  }

  private String term(String nt) {
    String got = terms.get(nt);
    if (got == null) {
      got = PrologTerms.term(nt);
      if (terms.size() < 1_000_000) terms.put(nt, got);
    }
    return got;
  }

  /**
   * JTALIS' output provider: rsp_result events, grouped by (query, end timestamp) into one
   * result event per query and completing input event; rsp_barrier ends a batch.
   */
  private final class Output extends AbstractJtalisEventProvider {
    private long groupSeq = -1;
    private long groupMs;
    private final Map<Integer, List<String[]>> rows = new LinkedHashMap<>();
    private long seenBarrier;

    @Override
    public synchronized void outputEvent(EtalisEvent e) {
      if (e.getName().equals("rsp_barrier")) {
        flush();
        seenBarrier = Long.parseLong(String.valueOf(e.getProperty(0)).strip());
        notifyAll();
        return;
      }
      if (!e.getName().equals("rsp_result")) return;
      long s = e.getTimeEnds().getIndex();
      if (s != groupSeq) {
        flush();
        groupSeq = s;
        groupMs = e.getTimeEnds().getTimeWithoutIndex();
      }
      int q = Integer.parseInt(String.valueOf(e.getProperty(0)).strip());
      Query query = queries.get(q);
      String[] row = new String[query.vars.length];
      for (int i = 0; i < row.length; i++) {
        Object v = i + 1 < e.getArity() ? e.getProperty(i + 1) : null;
        String text = v == null ? "" : String.valueOf(v);
        row[i] = text.isEmpty() ? null : text;
      }
      rows.computeIfAbsent(q, k -> new ArrayList<>()).add(row);
    }

    private void flush() {
      for (Map.Entry<Integer, List<String[]>> en : rows.entrySet()) {
        Query query = queries.get(en.getKey());
        results.append(query.name, groupMs, query.vars, en.getValue());
      }
      rows.clear();
      groupSeq = -1;
    }

    /** Waits for marker n; throws as soon as swipl is gone (checked every second). */
    synchronized boolean awaitBarrier(long n, long timeoutS, Supplier<String> died)
        throws InterruptedException {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutS);
      while (seenBarrier < n) {
        long left = deadline - System.nanoTime();
        if (left <= 0) return false;
        String gone = died.get();
        if (gone != null) throw new IllegalStateException(gone);
        TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, TimeUnit.SECONDS.toNanos(1)));
      }
      return true;
    }

    @Override
    public String toString() {
      return "rsp-sdk result buffer";
    }
  }

  @Override
  public Map<String, Object> stats() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("events", events);
    m.put("push_ns", pushNs);
    return m;
  }

  @Override
  public void close() throws Exception {
    JtalisContextImpl c = ctx;
    ctx = null;
    try {
      if (c != null) c.shutdown(); // joins JTALIS' threads, then ends the swipl subprocess
    } finally {
      if (engine != null) engine.killProlog(); // also after a failed open
    }
  }
}
