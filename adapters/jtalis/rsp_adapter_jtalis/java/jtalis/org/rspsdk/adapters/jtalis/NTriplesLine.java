package org.rspsdk.adapters.jtalis;

/** One N-Triples statement line split into its three terms (static data files). */
final class NTriplesLine {
  private NTriplesLine() {}

  static String[] split(String line, String file, int number) {
    String body = line.endsWith(".") ? line.substring(0, line.length() - 1).strip() : null;
    if (body == null) throw bad(file, number, "a statement ending in '.'", line);
    int a = body.indexOf(' ');
    int b = a < 0 ? -1 : body.indexOf(' ', a + 1);
    if (a < 0 || b < 0) throw bad(file, number, "'<s> <p> <o> .'", line);
    return new String[] {
      body.substring(0, a), body.substring(a + 1, b).strip(), body.substring(b + 1).strip()
    };
  }

  private static IllegalArgumentException bad(String file, int n, String what, String line) {
    return new IllegalArgumentException(
        file + ":" + n + ": expected " + what + " (the jtalis adapter loads static data from "
            + "N-Triples files), got " + (line.length() > 200 ? line.substring(0, 200) : line));
  }
}
