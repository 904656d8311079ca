package org.rspsdk.adapters.sparqlstream;

import com.espertech.esper.client.Configuration;
import com.espertech.esper.client.EPServiceProvider;
import com.espertech.esper.client.EPServiceProviderManager;
import com.espertech.esper.client.EPStatement;
import com.espertech.esper.client.EventBean;
import com.espertech.esper.client.time.CurrentTimeEvent;
import com.hp.hpl.jena.query.QuerySolution;
import com.hp.hpl.jena.query.ResultSet;
import com.hp.hpl.jena.rdf.model.Literal;
import com.hp.hpl.jena.rdf.model.RDFNode;
import es.upm.fi.oeg.morph.stream.esper.EsperQuery;
import es.upm.fi.oeg.morph.stream.esper.EsperResultSet;
import es.upm.fi.oeg.morph.stream.query.SourceQuery;
import es.upm.fi.oeg.morph.stream.rewriting.QueryRewriting;
import es.upm.fi.oeg.morph.stream.translate.DataTranslator;
import es.upm.fi.oeg.siq.sparql.SparqlResults;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.rspsdk.bridge.EngineDriver;
import org.rspsdk.bridge.Json;
import org.rspsdk.bridge.NTriples;
import org.rspsdk.bridge.Packed;
import org.rspsdk.bridge.ResultBuffer;
import org.slf4j.LoggerFactory;
import scala.collection.JavaConverters;

/**
 * SPARQLstream (morph-streams) on Esper, in application time.
 *
 * <p>What runs is the engine's own pipeline: morph's {@link QueryRewriting} turns the SPARQLstream
 * query through the R2RML mapping into an {@link EsperQuery} (EPL), Esper 5 evaluates the EPL over
 * the relational stream, and morph's {@link DataTranslator} turns each Esper output back into
 * SPARQL bindings through the same mapping — the path of morph's {@code EsperAdapter} and its
 * {@code StreamRec} receiver. Two things differ from morph's own deployment, both for
 * determinism: (1) morph's Akka actors ({@code EsperServer}/{@code EsperEngine}) only forward
 * messages to one Esper runtime, so the driver holds that runtime itself and calls the same Esper
 * API ({@code createEPL}, {@code sendEvent(Map, type)}, an {@code UpdateListener} reading the
 * output's properties in the statement's order); (2) Esper's internal timer is off and the clock
 * is moved by {@link CurrentTimeEvent}s to each tuple's application time, so {@code win:time} and
 * {@code output snapshot every} run on the stream's time instead of the wall clock.
 *
 * <p>The input: SPARQLstream consumes tuples, so pushed triples are folded into rows by the
 * inverted mapping ({@link TupleMapping}, {@link TupleAssembler}); rows are sent when time moves
 * past their timestamp. Config: {@code mapping} (R2RML Turtle, required), {@code column_types}
 * (overrides), {@code start_ms} (application time the queries are registered at; default: the
 * first pushed or advanced time).
 */
public final class SparqlStreamDriver implements EngineDriver {
  private static final AtomicLong INSTANCES = new AtomicLong();

  private ResultBuffer results;
  private File workdir;
  private TupleMapping mapping;
  private String mappingFile;
  private String boundStream;
  private TupleAssembler assembler;
  private EPServiceProvider esper;
  private QueryRewriting rewriting;
  private Long startMs;
  private long clock = Long.MIN_VALUE;
  private boolean started;
  private final List<Registered> queries = new ArrayList<>();
  private long late;
  private long outputs;

  /** One registered query: its name, its rewritten (source) queries, their statements. */
  private static final class Registered {
    final String name;
    final List<EsperQuery> parts = new ArrayList<>();
    final List<EPStatement> statements = new ArrayList<>();

    Registered(String name) {
      this.name = name;
    }
  }

  @Override
  public void open(String configJson, String workdir, ResultBuffer results) throws Exception {
    this.results = results;
    this.workdir = new File(workdir);
    quietLogging();
    Map<String, Object> config = Json.parseObject(configJson == null ? "{}" : configJson);
    Object m = config.get("mapping");
    if (!(m instanceof String)) {
      throw new IllegalArgumentException(
          "SPARQLstream needs engine config \"mapping\": the R2RML mapping (Turtle) from the "
              + "stream's triples to the tuples the engine consumes (e.g. SRBench's srbench.ttl)");
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> types = (Map<String, Object>) config.get("column_types");
    mapping = TupleMapping.read((String) m, types);
    mappingFile = (String) m;
    Object start = config.get("start_ms");
    if (start instanceof Number) startMs = ((Number) start).longValue();
    // morph reads its settings with Typesafe Config: the query class of the "esper" system
    File conf = new File(this.workdir, "morph.conf");
    Files.write(
        conf.toPath(),
        ("morph.streams.esper { adapter.query = \"es.upm.fi.oeg.morph.stream.esper.EsperQuery\" }\n")
            .getBytes(StandardCharsets.UTF_8));
    System.setProperty("config.file", conf.getAbsolutePath());
    com.typesafe.config.ConfigFactory.invalidateCaches();

    Configuration ec = new Configuration();
    for (Map.Entry<String, Map<String, Class<?>>> t : mapping.tables.entrySet()) {
      Map<String, Object> props = new LinkedHashMap<>(t.getValue());
      ec.addEventType(t.getKey(), props);
    }
    ec.getEngineDefaults().getThreading().setInternalTimerEnabled(false);
    esper =
        EPServiceProviderManager.getProvider(
            "rsp-sparqlstream-" + ProcessHandle.current().pid() + "-" + INSTANCES.incrementAndGet(),
            ec);
    esper.getEPRuntime().sendEvent(new CurrentTimeEvent(0L));
  }

  /** morph and Akka log at DEBUG through logback by default; keep warnings only. */
  private static void quietLogging() {
    org.slf4j.Logger root = LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    if (root instanceof ch.qos.logback.classic.Logger) {
      ((ch.qos.logback.classic.Logger) root).setLevel(ch.qos.logback.classic.Level.WARN);
    }
  }

  @Override
  public void registerStream(String iri) throws Exception {
    if (boundStream != null && !boundStream.equals(iri)) {
      throw new UnsupportedOperationException(
          "the SPARQLstream adapter binds one stream to the mapping; "
              + boundStream + " is bound already, " + iri + " cannot be added");
    }
    if (mapping.graphs().size() > 1 && !mapping.graphs().contains(iri)) {
      throw new IllegalArgumentException(
          "the R2RML mapping " + mappingFile + " names several streams (rr:graph " + mapping.graphs()
              + "), none of them " + iri + ": cannot tell which triples maps the stream feeds");
    }
    boundStream = iri;
    File bound = new File(workdir, "mapping-bound.ttl");
    mapping.writeBoundTo(iri, bound.getAbsolutePath());
    assembler = new TupleAssembler(mapping);
    rewriting = new QueryRewriting(bound.getAbsolutePath(), "esper");
  }

  @Override
  public void registerQuery(String name, String text) throws Exception {
    if (rewriting == null) {
      throw new IllegalStateException("register the stream before the query (the mapping is "
          + "bound to the stream's IRI)");
    }
    SourceQuery sq = rewriting.translate(text);
    EsperQuery eq = (EsperQuery) sq;
    Registered r = new Registered(name);
    if (eq.unions().size() > 0) {
      r.parts.addAll(JavaConverters.seqAsJavaListConverter(eq.unionQueries()).asJava());
    } else {
      r.parts.add(eq);
    }
    for (EsperQuery part : r.parts) {
      String epl = part.serializeQuery();
      if (!epl.contains(".win:")) {
        throw new IllegalArgumentException(
            "SPARQLstream rewrote the query to EPL without a window (" + epl.trim() + "): the "
                + "query's FROM NAMED STREAM IRI must be the stream the mapping is bound to, "
                + boundStream);
      }
      // the rewriting is the engine's decision: the run's engine log shows it
      System.err.println("sparqlstream: query " + name + " rewritten to EPL: " + epl.trim());
      esper.getEPAdministrator().compileEPL(epl); // the engine's own rejection, at once
    }
    queries.add(r);
    if (started) start(r);
  }

  /** Create the statements of {@code r} at the current clock (morph: RegisterQuery/ListenQuery). */
  private void start(Registered r) {
    for (EsperQuery part : r.parts) {
      EPStatement st = esper.getEPAdministrator().createEPL(part.serializeQuery());
      String[] props = st.getEventType().getPropertyNames();
      st.addListener(
          (EventBean[] newData, EventBean[] oldData) -> {
            if (newData == null || newData.length == 0) return; // morph sends newData only
            List<Object[]> rows = new ArrayList<>(newData.length);
            for (EventBean b : newData) {
              Object[] row = new Object[props.length];
              for (int i = 0; i < props.length; i++) row[i] = b.get(props[i]);
              rows.add(row);
            }
            emit(r.name, part, rows);
          });
      r.statements.add(st);
    }
  }

  /** morph's StreamRec: EsperResultSet → DataTranslator.transform → SPARQL bindings. */
  @SuppressWarnings({"unchecked", "rawtypes"})
  private void emit(String name, EsperQuery part, List<Object[]> rows) {
    scala.collection.immutable.Stream records =
        JavaConverters.asScalaBufferConverter(rows).asScala().toStream();
    scala.collection.Seq vars = part.selectXprs().keys().toList();
    EsperResultSet rs = new EsperResultSet(records, part.queryExpressions(), vars);
    List<Object> one = new ArrayList<>();
    one.add(rs);
    scala.collection.Seq seq = JavaConverters.asScalaBufferConverter(one).asScala().toList();
    SparqlResults sr = new DataTranslator(seq, part).transform();
    ResultSet out = sr.getResultSet();
    List<String> names = out.getResultVars();
    String[] v = names.toArray(new String[0]);
    List<String[]> bindings = new ArrayList<>();
    while (out.hasNext()) {
      QuerySolution sol = out.next();
      String[] row = new String[v.length];
      for (int i = 0; i < v.length; i++) row[i] = term(sol.get(v[i]));
      bindings.add(row);
    }
    if (bindings.isEmpty()) return;
    outputs++;
    results.append(name, esper.getEPRuntime().getCurrentTime(), v, bindings);
  }

  private static String term(RDFNode n) {
    if (n == null) return null;
    if (n.isURIResource()) return NTriples.iri(n.asResource().getURI());
    if (n.isLiteral()) {
      Literal l = n.asLiteral();
      return NTriples.literal(l.getLexicalForm(), l.getDatatypeURI(), l.getLanguage());
    }
    return NTriples.bnode(n.asResource().getId().getLabelString());
  }

  private void ensureStarted(long t) {
    if (started) return;
    started = true;
    clock = startMs != null ? startMs : t;
    if (clock != 0L) esper.getEPRuntime().sendEvent(new CurrentTimeEvent(clock));
    for (Registered r : queries) start(r);
  }

  /** Move Esper's clock forward (firing the outputs due by then); never backwards. */
  private void moveClock(long t) {
    if (t > clock) {
      clock = t;
      esper.getEPRuntime().sendEvent(new CurrentTimeEvent(t));
    }
  }

  private void send(List<TupleAssembler.Row> rows) {
    for (TupleAssembler.Row row : rows) {
      if (row.time < clock) late++;
      moveClock(row.time);
      esper.getEPRuntime().sendEvent(new LinkedHashMap<>(row.values), row.table);
    }
  }

  @Override
  public void push(String streamIri, byte[] packed, int offset, int length) throws Exception {
    if (!streamIri.equals(boundStream)) {
      throw new IllegalArgumentException(
          "pushed to " + streamIri + ", but the mapping is bound to " + boundStream);
    }
    Packed.forEach(
        packed,
        offset,
        length,
        (t, s, p, o) -> {
          ensureStarted(t);
          send(assembler.add(streamIri, t, s, p, o));
        });
  }

  @Override
  public void advanceTime(long tAppMs) throws Exception {
    ensureStarted(tAppMs);
    if (assembler != null && assembler.hasPending() && assembler.pendingTime() <= tAppMs) {
      send(assembler.release());
    }
    moveClock(tAppMs);
  }

  @Override
  public Map<String, Object> stats() {
    Map<String, Object> out = new LinkedHashMap<>();
    if (assembler != null) {
      out.put("triples", assembler.triples);
      out.put("triples_mapped", assembler.mapped);
      out.put("triples_unmapped", assembler.unmapped);
      out.put("tuples", assembler.rows);
      out.put("column_conflicts", assembler.conflicts);
    }
    out.put("late_tuples", late);
    out.put("outputs", outputs);
    return out;
  }

  @Override
  public void close() throws Exception {
    if (esper != null) esper.destroy();
    esper = null;
  }
}
