package org.rspsdk.adapters.csparql;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;

/**
 * Test harness for the C-SPARQL adapter's term conversion (CsparqlTerms): reads lines
 * {@code in<TAB>term} or {@code out<TAB>string} on stdin ({@code \\n} in an out line is a raw newline) and prints one line per input, the
 * converted text (raw newlines written {@code \\n}), {@code NULL}, or {@code ERROR<TAB>message}.
 */
public final class CsparqlTermsCheck {
  public static void main(String[] args) throws Exception {
    BufferedReader r =
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    int n = 0;
    for (String line; (line = r.readLine()) != null; ) {
      n++;
      int tab = line.indexOf('\t');
      String dir = line.substring(0, tab);
      String value = line.substring(tab + 1);
      if (dir.equals("out")) value = value.replace("\\n", "\n"); // engine text: raw newlines
      try {
        String got =
            dir.equals("in") ? CsparqlTerms.toEngine(value, n) : CsparqlTerms.fromEngine(value);
        System.out.println(got == null ? "NULL" : got.replace("\n", "\\n"));
      } catch (IllegalArgumentException e) {
        System.out.println("ERROR\t" + e.getMessage());
      }
    }
  }
}
