package org.rspsdk.adapters.csparql;

import com.espertech.esper.client.EPServiceProviderManager;
import eu.larkc.csparql.cep.api.RdfQuadruple;
import eu.larkc.csparql.cep.api.RdfStream;
import eu.larkc.csparql.common.RDFTable;
import eu.larkc.csparql.common.config.Config;
import eu.larkc.csparql.core.engine.CsparqlEngineImpl;
import eu.larkc.csparql.core.engine.CsparqlQueryResultProxy;
import eu.larkc.csparql.core.new_parser.CsparqlParser;
import eu.larkc.csparql.core.streams.formats.CSparqlQuery;
import java.io.File;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.rspsdk.adapters.csparql.CsparqlResults;
import org.rspsdk.adapters.csparql.CsparqlTerms;
import org.rspsdk.bridge.EngineDriver;
import org.rspsdk.bridge.Json;
import org.rspsdk.bridge.Packed;
import org.rspsdk.bridge.ResultBuffer;
import org.rspsdk.glue.EngineLog;

/**
 * Driver of C-SPARQL 0.9.7 (streamreasoning/CSPARQL-engine) in application time.
 *
 * <p>C-SPARQL's external clock is Esper's, moved by the quads themselves, and left alone it
 * loses the first quad (it anchors the output schedule and expires with the first output),
 * enters tick-boundary quads at the previous time and reports at c or c+1. The driver makes it
 * deterministic (the recipe verified in the engines lab):
 *
 * <ol>
 *   <li>a private clock stream whose heartbeat quads never reach a query (C-SPARQL filters
 *       quads by stream) is registered with the data streams;
 *   <li>before the first quad the clock is <em>primed</em> with heartbeats at P and P+1, where P
 *       lies on the grid {@code t0_ms + k·lcm(STEPs, tick)} at least one grid step before the
 *       data: every query then reports at exactly {@code t0_ms + k·β};
 *   <li>before each quad a heartbeat goes at every tick boundary up to its time, so each window
 *       closes on its own; {@code advance_time} does the same and releases the last boundary.
 * </ol>
 *
 * <p>C-SPARQL's windows are then exactly {@code (c−ω, c]}. SECRET (and the oracle) use {@code
 * [c−ω, c)}; with {@code window_bounds = "left-closed"} (the default) every timestamp is pushed
 * 1 ms late, which on integer milliseconds is the same as {@code [c−ω, c)} in the original times.
 * {@code "right-closed"} keeps the engine's own bounds (and exact {@code f:timestamp} values).
 *
 * <p>Config (open's JSON): {@code tick_ms} (1000), {@code t0_ms} (0; a multiple of the tick),
 * {@code window_bounds}, {@code fail_on_engine_error} (true: a window evaluation that C-SPARQL
 * only logs fails the push that triggered it).
 */
public final class CsparqlDriver implements EngineDriver {
  static final String CLOCK = "http://rsp-sdk.invalid/csparql/clock";
  private static final String HB = "http://rsp-sdk.invalid/csparql/heartbeat";
  private static final Pattern WINDOW =
      Pattern.compile(
          "\\[\\s*RANGE\\s+(\\d+)\\s*(ms|s|m|h|d)\\s+(?:STEP\\s+(\\d+)\\s*(ms|s|m|h|d)|TUMBLING)\\s*\\]",
          Pattern.CASE_INSENSITIVE);
  private static boolean opened; // Esper's default provider is JVM-wide: one engine per JVM

  private CsparqlEngineImpl engine;
  private ResultBuffer results;
  private EngineLog log;
  private final Map<String, RdfStream> streams = new LinkedHashMap<>();
  private final Map<String, String> queryIds = new LinkedHashMap<>();
  private final List<Long> steps = new ArrayList<>();
  private RdfStream clock;
  private long tick = 1000;
  private long t0 = 0;
  private long shift = 1;
  private boolean failOnEngineError = true;
  private boolean primed;
  private long origin;
  private long lastHeartbeat;
  private long lastTime = Long.MIN_VALUE;
  private long quads;
  private long heartbeats;
  private long engineNs; // time inside RdfStream.put (the engine's own work), for overheads
  private long pushNs; // time inside the push verb (parsing, terms, heartbeats, engine)

  @Override
  public void open(String configJson, String workdir, ResultBuffer results) throws Exception {
    synchronized (CsparqlDriver.class) {
      if (opened) {
        throw new IllegalStateException("one C-SPARQL engine per JVM (Esper's provider is shared)");
      }
      opened = true;
    }
    Map<String, Object> cfg = Json.parseObject(configJson);
    tick = number(cfg, "tick_ms", 1000);
    t0 = number(cfg, "t0_ms", 0);
    Object bounds = cfg.getOrDefault("window_bounds", "left-closed");
    if ("left-closed".equals(bounds)) {
      shift = 1;
    } else if ("right-closed".equals(bounds)) {
      shift = 0;
    } else {
      throw new IllegalArgumentException(
          "window_bounds must be \"left-closed\" or \"right-closed\", got " + bounds);
    }
    failOnEngineError = !Boolean.FALSE.equals(cfg.get("fail_on_engine_error"));
    if (tick <= 0 || Math.floorMod(t0, tick) != 0) {
      throw new IllegalArgumentException(
          "tick_ms must be positive and t0_ms a multiple of it (tick_ms=" + tick + ", t0_ms=" + t0
              + ")");
    }
    this.results = results;
    this.log = EngineLog.install("C-SPARQL");
    Properties p = new Properties();
    p.put("esper.externaltime.enabled", true);
    p.put("esper.externaltime.tick", tick); // both keys: a missing tick divides by zero
    Config.INSTANCE.setConfigParams(p); // before the engine exists: EsperEngine reads it once
    engine = new CsparqlEngineImpl();
    engine.initialize(true); // true: keep quad timestamps for f:timestamp()
    clock = engine.registerStream(new RdfStream(CLOCK));
  }

  @Override
  public void loadStatic(String graphIri, String path) throws Exception {
    File f = new File(path);
    if (!f.isFile()) throw new IllegalArgumentException("no such file: " + path);
    // not putStaticNamedModel: it first *dereferences* the graph IRI (an http: name would go to
    // the network); SPARQL LOAD of a file: URL reads it locally (syntax from the extension)
    engine.execUpdateQueryOverDatasource(
        "LOAD <" + f.getAbsoluteFile().toURI() + "> INTO GRAPH <" + graphIri + ">");
  }

  @Override
  public void registerStream(String iri) throws Exception {
    if (CLOCK.equals(iri)) throw new IllegalArgumentException(iri + " is the driver's clock");
    if (streams.containsKey(iri)) return;
    streams.put(iri, engine.registerStream(new RdfStream(iri)));
  }

  @Override
  public void registerQuery(String name, String text) throws Exception {
    if (primed) {
      throw new IllegalStateException(
          "C-SPARQL anchors a query's windows at the first quad it sees: register every query "
              + "before pushing data or advancing time");
    }
    CsparqlParser.createAndParse(text); // the parser's own message (registerQuery prints it)
    CsparqlQueryResultProxy proxy;
    try {
      proxy = engine.registerQuery(text, false);
    } catch (Throwable t) {
      throw new IllegalArgumentException("C-SPARQL rejected the query: " + t, t);
    }
    queryIds.put(name, proxy.getId());
    Matcher m = WINDOW.matcher(text);
    while (m.find()) {
      long range = millis(m.group(1), m.group(2));
      steps.add(m.group(3) == null ? range : millis(m.group(3), m.group(4)));
    }
    proxy.addObserver((observable, arg) -> report(name, (RDFTable) arg));
  }

  private void report(String name, RDFTable table) {
    long now = EPServiceProviderManager.getDefaultProvider().getEPRuntime().getCurrentTime();
    long close = now - Math.floorMod(now, tick);
    String[] vars = table.getNames().toArray(new String[0]);
    results.append(name, close, vars, CsparqlResults.rows(table, vars.length));
  }

  @Override
  public void push(String streamIri, byte[] packed, int offset, int length) throws Exception {
    RdfStream stream = streams.get(streamIri);
    if (stream == null) {
      throw new IllegalArgumentException("stream " + streamIri + " is not registered");
    }
    final long started = System.nanoTime();
    final int[] line = {0};
    Packed.forEach(
        packed,
        offset,
        length,
        (t, s, p, o) -> {
          line[0]++;
          long ts = t + shift;
          if (ts < lastTime) {
            throw new IllegalArgumentException(
                "packed batch line " + line[0] + ": time " + t + " is earlier than the last "
                    + "triple or advance_time: C-SPARQL needs non-decreasing application time");
          }
          RdfQuadruple q =
              new RdfQuadruple(
                  CsparqlTerms.toEngine(s, line[0]),
                  CsparqlTerms.toEngine(p, line[0]),
                  CsparqlTerms.toEngine(o, line[0]),
                  ts);
          long t0 = System.nanoTime();
          beatUpTo(ts);
          stream.put(q);
          engineNs += System.nanoTime() - t0;
          lastTime = ts;
          quads++;
        });
    pushNs += System.nanoTime() - started;
    if (failOnEngineError) log.check("push");
  }

  @Override
  public void advanceTime(long tAppMs) throws Exception {
    long until = tAppMs + shift; // nothing earlier than this will come
    if (until <= lastTime) return;
    beatUpTo(until - 1);
    heartbeat(until); // releases a boundary heartbeat C-SPARQL holds back
    lastTime = until;
    if (failOnEngineError) log.check("advance_time");
  }

  /** Prime on first use, then one heartbeat at every tick boundary in (last, ts]. */
  private void beatUpTo(long ts) {
    if (!primed) prime(ts);
    for (long b = (Math.floorDiv(lastHeartbeat, tick) + 1) * tick; b <= ts; b += tick) {
      heartbeat(b);
    }
  }

  private void prime(long first) {
    long grid = tick;
    for (long step : steps) grid = lcm(grid, step);
    long bound = first - grid - 2; // one grid step before the data, and room for P+1
    origin = bound - Math.floorMod(bound - t0, grid);
    primed = true;
    heartbeat(origin); // the first quad ever: anchors every query's output schedule
    heartbeat(origin + 1); // moves Esper off the tick boundary
  }

  private void heartbeat(long t) {
    clock.put(new RdfQuadruple(HB, HB, HB, t));
    lastHeartbeat = t;
    heartbeats++;
  }

  @Override
  public Map<String, Object> stats() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("quads", quads);
    m.put("heartbeats", heartbeats);
    m.put("engine_errors", log == null ? 0L : log.errors());
    m.put("engine_ns", engineNs);
    m.put("push_ns", pushNs);
    if (primed) m.put("clock_origin_ms", origin);
    return m;
  }

  @Override
  public void close() throws Exception {
    if (engine == null) return;
    // destroy() alone throws ConcurrentModificationException (it removes from the list it
    // iterates): unregister every query from a copy first
    for (CSparqlQuery q : new ArrayList<>(engine.getAllQueries())) {
      engine.unregisterQuery(q.getId());
    }
    engine.destroy();
    engine = null;
  }

  private static long number(Map<String, Object> cfg, String key, long dflt) {
    Object v = cfg.get(key);
    if (v == null) return dflt;
    if (!(v instanceof Number)) throw new IllegalArgumentException(key + " must be a number");
    return ((Number) v).longValue();
  }

  private static long millis(String amount, String unit) {
    long n = Long.parseLong(amount);
    switch (unit.toLowerCase()) {
      case "ms":
        return n;
      case "s":
        return n * 1000;
      case "m":
        return n * 60_000;
      case "h":
        return n * 3_600_000;
      default:
        return n * 86_400_000;
    }
  }

  private static long lcm(long a, long b) {
    long x = a;
    long y = b;
    while (y != 0) {
      long r = x % y;
      x = y;
      y = r;
    }
    return a / x * b;
  }
}
