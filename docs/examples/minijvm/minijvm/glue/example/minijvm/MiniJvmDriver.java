package example.minijvm;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.rspsdk.bridge.EngineDriver;
import org.rspsdk.bridge.Json;
import org.rspsdk.bridge.Packed;
import org.rspsdk.bridge.ResultBuffer;

/**
 * minijvm's driver: rsp-sdk's verbs in, the engine's own API out. rsp-sdk compiles this class
 * against the engine jar and its bridge when the engine is provisioned ({@code rsp engines add
 * minijvm minijvm-engine.jar}), and the jpype, py4j and docker runtimes host it alike.
 */
public final class MiniJvmDriver implements EngineDriver {
  private MiniEngine engine;
  private ResultBuffer results;
  private long pushes;
  private long triples;

  @Override
  public void open(String configJson, String workdir, ResultBuffer results) {
    this.results = results; // result events go here; the SDK drains it on poll
    this.engine = new MiniEngine();
  }

  @Override
  public void registerStream(String iri) {
    engine.registerStream(iri);
  }

  /** {@code text} is what the adapter's render() wrote: minirsp's JSON query. */
  @Override
  @SuppressWarnings("unchecked")
  public void registerQuery(String name, String text) {
    Map<String, Object> q = Json.parseObject(text);
    List<String> select = new ArrayList<>();
    for (Object v : (List<Object>) q.get("select")) select.add((String) v);
    List<String[]> where = new ArrayList<>();
    for (Object p : (List<Object>) q.get("where")) {
      where.add(((List<Object>) p).toArray(new String[0]));
    }
    engine.registerQuery(
        (String) q.get("stream"),
        ((Number) q.get("range_ms")).longValue(),
        ((Number) q.get("step_ms")).longValue(),
        select,
        where,
        (close, vars, rows) -> results.append(name, close, vars.toArray(new String[0]), rows));
  }

  /** A batch: packed lines "t_app_ms s p o", N-Triples terms. */
  @Override
  public void push(String streamIri, byte[] packed, int offset, int length) throws Exception {
    pushes++;
    triples += Packed.forEach(packed, offset, length, (t, s, p, o) -> engine.put(streamIri, t, s, p, o));
  }

  @Override
  public void advanceTime(long tAppMs) {
    engine.advanceTime(tAppMs);
  }

  @Override
  public Map<String, Object> stats() {
    return Map.of("pushes", pushes, "triples", triples);
  }

  @Override
  public void close() {
    engine = null;
  }
}
