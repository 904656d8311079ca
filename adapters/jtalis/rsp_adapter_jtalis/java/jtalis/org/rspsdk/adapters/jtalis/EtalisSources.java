package org.rspsdk.adapters.jtalis;

import java.io.File;

/**
 * Where ETALIS' {@code src/ep_sparql/ep_sparql.P} is: the ETALIS folder {@code rsp engines add
 * jtalis} put on the classpath (the same folder, wherever the runtime mounts it: the host cache
 * for jpype/py4j, {@code /opt/rsp/cp/…} in the engine image), or {@code -Drsp.jtalis.etalis}.
 */
final class EtalisSources {
  private static final String EP_SPARQL = "src/ep_sparql/ep_sparql.P";

  private EtalisSources() {}

  static File epSparql() {
    String explicit = System.getProperty("rsp.jtalis.etalis");
    if (explicit != null) return found(new File(explicit));
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      File f = found(new File(entry));
      if (f != null) return f;
    }
    throw new IllegalStateException(
        "no ETALIS folder (with " + EP_SPARQL + ") on the classpath: rsp engines add jtalis "
            + "/path/to/etalis");
  }

  private static File found(File root) {
    for (File base : new File[] {root, new File(root, "etalis")}) {
      File f = new File(base, EP_SPARQL);
      if (f.isFile()) return f;
    }
    return null;
  }
}
