package org.rspsdk.adapters.cqels;

import com.hp.hpl.jena.datatypes.TypeMapper;
import com.hp.hpl.jena.graph.Node;
import com.hp.hpl.jena.query.Query;
import com.hp.hpl.jena.rdf.model.AnonId;
import com.hp.hpl.jena.sparql.core.Var;
import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.deri.cqels.data.Mapping;
import org.deri.cqels.engine.ContinuousListener;
import org.deri.cqels.engine.ContinuousSelect;
import org.deri.cqels.engine.ExecContext;
import org.deri.cqels.engine.RDFStream;
import org.deri.cqels.lang.cqels.ParserCQELS;
import org.rspsdk.bridge.EngineDriver;
import org.rspsdk.bridge.NTriples;
import org.rspsdk.bridge.Packed;
import org.rspsdk.bridge.ResultBuffer;
import org.rspsdk.glue.EngineLog;

/**
 * Driver of CQELS 1.x: eager, wall-clock windows, one result event per {@link Mapping}.
 *
 * <p>CQELS has no application time: a window is a buffer keyed by {@code System.nanoTime()} at
 * arrival, so the feeder paces the stream in real time and this driver only reports how late
 * the data reached the engine ({@code max_lateness_ms} in stats). Results are produced during
 * {@code stream()} on the pushing thread, as Istream mappings of dictionary ids; the ids are
 * decoded here (id ≥ 0, including 0, is a node; a negative id is unbound) and written as
 * N-Triples by hand (ARQ 2.9's formatters abbreviate typed literals).
 *
 * <p>One engine per JVM: {@code CQELSEngine} uses Esper's JVM-wide default provider, and two
 * contexts in one JVM cross-deliver triples and decode ids in the wrong dictionary (silently
 * wrong results). The runtimes start one JVM per session; this driver refuses a second open.
 * Each session gets a fresh home directory (BerkeleyDB JE cache, TDB dictionary) in its workdir.
 */
public final class CqelsDriver implements EngineDriver {
  private static boolean opened;

  private ExecContext ctx;
  private ResultBuffer results;
  private EngineLog log;
  private final Map<String, RDFStream> streams = new LinkedHashMap<>();
  private final Map<String, Node> nodes = new HashMap<>();
  private final TypeMapper types = TypeMapper.getInstance();
  private long triples;
  private long mappings;
  private long engineNs; // time inside RDFStream.stream (the engine's own work, results included)
  private long pushNs; // time inside the push verb (parsing, terms, engine)
  private long firstApp = Long.MIN_VALUE;
  private long firstWall;
  private long maxLateness;

  /** A stream CQELS matches by the query's {@code STREAM <iri>}; we only ever call stream(). */
  private static final class Stream extends RDFStream {
    Stream(ExecContext ctx, String iri) {
      super(ctx, iri);
    }

    @Override
    public void stop() {}
  }

  @Override
  public void open(String configJson, String workdir, ResultBuffer results) throws Exception {
    synchronized (CqelsDriver.class) {
      if (opened) {
        throw new IllegalStateException(
            "one CQELS engine per JVM: its Esper provider is JVM-wide and two contexts would "
                + "mix their dictionaries");
      }
      opened = true;
    }
    this.results = results;
    this.log = EngineLog.install("CQELS");
    File home = new File(workdir, "cqels-home");
    if (home.exists()) ExecContext.deleteDir(home);
    if (!home.mkdirs()) throw new IllegalStateException("cannot create " + home);
    ctx = new ExecContext(home.getAbsolutePath(), true); // true: a clean dataset
  }

  @Override
  public void loadStatic(String graphIri, String path) throws Exception {
    File f = new File(path);
    if (!f.isFile()) throw new IllegalArgumentException("no such file: " + path);
    ctx.loadDataset(graphIri, f.getAbsoluteFile().toURI().toString()); // query it: GRAPH <iri>
  }

  @Override
  public void registerStream(String iri) throws Exception {
    if (!streams.containsKey(iri)) streams.put(iri, new Stream(ctx, iri));
  }

  @Override
  public void registerQuery(String name, String text) throws Exception {
    List<String> projected = new ArrayList<>();
    ContinuousSelect select;
    try {
      Query q = new Query();
      new ParserCQELS().parse(q, text);
      for (Var v : q.getProjectVars()) projected.add(v.getVarName());
      select = ctx.registerSelect(text);
    } catch (Throwable t) {
      throw new IllegalArgumentException("CQELS rejected the query: " + t, t);
    }
    final String[] vars = projected.toArray(new String[0]);
    select.register(
        new ContinuousListener() {
          @Override
          public void update(Mapping m) {
            report(name, vars, m);
          }
        });
  }

  private void report(String name, String[] vars, Mapping m) {
    Map<String, Long> ids = new HashMap<>();
    for (Iterator<Var> it = m.vars(); it.hasNext(); ) {
      Var v = it.next();
      ids.put(v.getVarName(), m.get(v));
    }
    String[] names = vars.length > 0 ? vars : ids.keySet().toArray(new String[0]);
    String[] row = new String[names.length];
    for (int i = 0; i < names.length; i++) {
      Long id = ids.get(names[i]);
      row[i] = id == null || id < 0 ? null : term(ctx.engine().decode(id));
    }
    mappings++;
    results.append(name, null, names, List.<String[]>of(row));
  }

  static String term(Node n) {
    if (n == null) return null;
    if (n.isURI()) return NTriples.iri(n.getURI());
    if (n.isBlank()) return NTriples.bnode(label(n.getBlankNodeLabel()));
    if (n.isLiteral()) {
      return NTriples.literal(
          n.getLiteralLexicalForm(), n.getLiteralDatatypeURI(), n.getLiteralLanguage());
    }
    return null; // a variable or other non-term: nothing to report
  }

  /** A Jena blank node label ("56f839fb:1a2035c83cf:-7fff") as an N-Triples label. */
  static String label(String jena) {
    StringBuilder sb = new StringBuilder(jena.length() + 1).append('b');
    for (int i = 0; i < jena.length(); i++) {
      char c = jena.charAt(i);
      if (Character.isLetterOrDigit(c) && c < 128) sb.append(c);
      else sb.append('_').append(Integer.toHexString(c)).append('_');
    }
    return sb.toString();
  }

  @Override
  public void push(String streamIri, byte[] packed, int offset, int length) throws Exception {
    RDFStream stream = streams.get(streamIri);
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
          if (line[0] == 1) lateness(t);
          Node ns = node(s, line[0]);
          Node np = node(p, line[0]);
          Node no = node(o, line[0]);
          long t0 = System.nanoTime();
          stream.stream(ns, np, no);
          engineNs += System.nanoTime() - t0;
          triples++;
        });
    pushNs += System.nanoTime() - started;
    log.check("push");
  }

  /** How far behind its application-time schedule the first triple of a batch arrives. */
  private void lateness(long tApp) {
    long wall = System.nanoTime();
    if (firstApp == Long.MIN_VALUE) {
      firstApp = tApp;
      firstWall = wall;
      return;
    }
    long late = (wall - firstWall) / 1_000_000 - (tApp - firstApp);
    if (late > maxLateness) maxLateness = late;
  }

  private Node node(String term, int line) {
    Node cached = nodes.get(term);
    if (cached != null) return cached;
    Node n;
    if (term.startsWith("<")) {
      n = Node.createURI(NTriples.iriValue(term));
    } else if (term.startsWith("_:")) {
      n = Node.createAnon(new AnonId(term.substring(2)));
    } else if (term.startsWith("\"")) {
      String lex = NTriples.lexicalForm(term);
      int close = term.lastIndexOf('"');
      String lang =
          close + 1 < term.length() && term.charAt(close + 1) == '@'
              ? term.substring(close + 2)
              : null;
      String dt = NTriples.datatype(term);
      n =
          lang != null
              ? Node.createLiteral(lex, lang, false)
              : dt != null ? Node.createLiteral(lex, null, types.getSafeTypeByName(dt))
                  : Node.createLiteral(lex);
    } else {
      throw new IllegalArgumentException(
          "packed batch line " + line + ": expected an N-Triples term, got " + term);
    }
    if (nodes.size() < 1_000_000) nodes.put(term, n); // IRIs and values repeat: parse once
    return n;
  }

  @Override
  public Map<String, Object> stats() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("triples", triples);
    m.put("mappings", mappings);
    m.put("max_lateness_ms", maxLateness);
    m.put("engine_errors", log == null ? 0L : log.errors());
    m.put("engine_ns", engineNs);
    m.put("push_ns", pushNs);
    return m;
  }

  @Override
  public void close() throws Exception {
    // CQELS has no shutdown API (Esper, BerkeleyDB JE threads): the runtime ends the JVM
    ctx = null;
  }
}
