package org.rspsdk.adapters.csparql09;

import com.hp.hpl.jena.rdf.model.Model;
import com.hp.hpl.jena.rdf.model.ModelFactory;
import eu.larkc.csparql.cep.api.RdfQuadruple;
import eu.larkc.csparql.cep.api.RdfStream;
import eu.larkc.csparql.common.RDFTable;
import eu.larkc.csparql.common.streams.format.GenericObservable;
import eu.larkc.csparql.common.streams.format.GenericObserver;
import eu.larkc.csparql.engine.CsparqlEngineImpl;
import eu.larkc.csparql.engine.CsparqlQueryResultProxy;
import eu.larkc.csparql.streams.formats.CSparqlQuery;
import java.io.File;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.rspsdk.adapters.csparql.CsparqlResults;
import org.rspsdk.adapters.csparql.CsparqlTerms;
import org.rspsdk.bridge.EngineDriver;
import org.rspsdk.bridge.Packed;
import org.rspsdk.bridge.ResultBuffer;
import org.rspsdk.glue.EngineLog;

/**
 * Driver of C-SPARQL 0.9 (csparqlengine-0.9.jar, as CityBench ran it): wall-clock windows.
 *
 * <p>0.9 has no external time: Esper's internal timer closes the windows and calls the
 * observers on its own thread, so the feeder paces the data in real time and results carry no
 * application time. Static data: 0.9 has no {@code putStaticNamedModel}; it reads a query's
 * {@code FROM <url>} as RDF/XML at every window evaluation. {@code load_static} therefore writes
 * the file as RDF/XML into the work dir and the graph's IRI in later queries' FROM clauses is
 * replaced by that file's URL.
 */
public final class Csparql09Driver implements EngineDriver {
  private static boolean opened; // Esper's default provider is JVM-wide: one engine per JVM

  private CsparqlEngineImpl engine;
  private ResultBuffer results;
  private EngineLog log;
  private File workdir;
  private final Map<String, RdfStream> streams = new LinkedHashMap<>();
  private final Map<String, String> staticFiles = new LinkedHashMap<>();
  private long quads;

  @Override
  public void open(String configJson, String workdir, ResultBuffer results) throws Exception {
    synchronized (Csparql09Driver.class) {
      if (opened) {
        throw new IllegalStateException("one C-SPARQL engine per JVM (Esper's provider is shared)");
      }
      opened = true;
    }
    this.results = results;
    this.workdir = new File(workdir);
    this.log = EngineLog.install("C-SPARQL");
    engine = new CsparqlEngineImpl();
    engine.initialize(true); // true: keep quad timestamps for f:timestamp()
  }

  @Override
  public void loadStatic(String graphIri, String path) throws Exception {
    File src = new File(path);
    if (!src.isFile()) throw new IllegalArgumentException("no such file: " + path);
    Model m = ModelFactory.createDefaultModel();
    try (InputStream in = new FileInputStream(src)) {
      m.read(in, src.toURI().toString(), syntax(src.getName()));
    }
    File dest = new File(workdir, "static-" + (staticFiles.size() + 1) + ".rdf");
    try (OutputStream out = new FileOutputStream(dest)) {
      m.write(out, "RDF/XML");
    }
    staticFiles.put(graphIri, dest.getAbsoluteFile().toURI().toString());
  }

  private static String syntax(String name) {
    String n = name.toLowerCase();
    if (n.endsWith(".ttl")) return "TURTLE";
    if (n.endsWith(".nt")) return "N-TRIPLE";
    if (n.endsWith(".n3")) return "N3";
    if (n.endsWith(".rdf") || n.endsWith(".owl") || n.endsWith(".xml")) return "RDF/XML";
    throw new IllegalArgumentException(
        "cannot tell the RDF syntax of " + name + "; expected .ttl, .nt, .n3, .rdf, .owl or .xml");
  }

  @Override
  public void registerStream(String iri) throws Exception {
    if (streams.containsKey(iri)) return;
    streams.put(iri, engine.registerStream(new RdfStream(iri)));
  }

  @Override
  public void registerQuery(String name, String text) throws Exception {
    String query = text;
    for (Map.Entry<String, String> e : staticFiles.entrySet()) {
      Pattern from = Pattern.compile("(FROM\\s+)<" + Pattern.quote(e.getKey()) + ">",
          Pattern.CASE_INSENSITIVE);
      query = from.matcher(query).replaceAll("$1<" + Matcher.quoteReplacement(e.getValue()) + ">");
    }
    CsparqlQueryResultProxy proxy;
    try {
      proxy = engine.registerQuery(query);
    } catch (Throwable t) {
      throw new IllegalArgumentException("C-SPARQL rejected the query: " + t, t);
    }
    proxy.addObserver(
        new GenericObserver<RDFTable>() {
          @Override
          public void update(GenericObservable<RDFTable> observable, RDFTable table) {
            report(name, table);
          }
        });
  }

  private void report(String name, RDFTable table) {
    String[] vars = table.getNames().toArray(new String[0]);
    // wall-clock windows: no application time
    results.append(name, null, vars, CsparqlResults.rows(table, vars.length));
  }

  @Override
  public void push(String streamIri, byte[] packed, int offset, int length) throws Exception {
    RdfStream stream = streams.get(streamIri);
    if (stream == null) {
      throw new IllegalArgumentException("stream " + streamIri + " is not registered");
    }
    final int[] line = {0};
    final long now = System.currentTimeMillis(); // 0.9 ignores it; its windows run on Esper's timer
    Packed.forEach(
        packed,
        offset,
        length,
        (t, s, p, o) -> {
          line[0]++;
          stream.put(
              new RdfQuadruple(
                  CsparqlTerms.toEngine(s, line[0]),
                  CsparqlTerms.toEngine(p, line[0]),
                  CsparqlTerms.toEngine(o, line[0]),
                  now));
          quads++;
        });
    log.check("push");
  }

  @Override
  public Map<String, Object> stats() {
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("quads", quads);
    m.put("engine_errors", log == null ? 0L : log.errors());
    return m;
  }

  @Override
  public void close() throws Exception {
    if (engine == null) return;
    // destroy() throws ConcurrentModificationException with registered queries: unregister
    // every query from a copy first
    for (CSparqlQuery q : new ArrayList<>(engine.getAllQueries())) {
      engine.unregisterQuery(q.getId());
    }
    engine.destroy();
    engine = null;
  }
}
