package org.rspsdk.adapters.csparql;

import java.util.regex.Pattern;
import org.rspsdk.bridge.NTriples;

/**
 * C-SPARQL's own term strings, both ways.
 *
 * <p>C-SPARQL does not take RDF terms but strings: {@code RdfQuadruple(s, p, o, t)} wants bare
 * IRIs and typed literals written {@code "lex"^^datatypeIRI} (no angle brackets); it splits the
 * object on {@code ^^} and deletes every quote of the lexical form, and anything without {@code
 * ^^} becomes an IRI. Results come back the same way: bare IRIs, {@code "lex"^^dt} with the raw
 * lexical form ({@code ^^null} for plain and language-tagged literals), bare blank node ids and
 * {@code ""} for unbound. Terms C-SPARQL would silently corrupt (language tags, lexical forms
 * holding {@code "} or {@code ^^}) are refused with the line that holds them.
 *
 * <p>Shared by the 0.9.7 and 0.9 drivers (the adapter's {@code java/common} glue folder): both
 * engines use these strings. It needs no engine class, so the unit tests compile it alone.
 */
public final class CsparqlTerms {
  private CsparqlTerms() {}

  public static final String XSD_STRING = "http://www.w3.org/2001/XMLSchema#string";

  // Jena blank node ids: a 32-hex-digit id (Jena 2.13) or java.rmi UID text (Jena 2.7)
  private static final Pattern ANON =
      Pattern.compile("[0-9a-f]{32}|-?[0-9a-f]+:[0-9a-f]+:-?[0-9a-f]+");

  /** An N-Triples term as the string C-SPARQL's {@code RdfQuadruple} expects. */
  public static String toEngine(String term, int line) {
    if (term.startsWith("<")) {
      return NTriples.iriValue(term);
    }
    if (term.startsWith("_:")) {
      return term; // an IRI named "_:label": equal labels still join, and it comes back as is
    }
    if (!term.startsWith("\"")) {
      throw refused(line, term, "an N-Triples term (<iri>, _:label or a literal)");
    }
    int close = term.lastIndexOf('"');
    if (close + 1 < term.length() && term.charAt(close + 1) == '@') {
      throw refused(
          line, term, "no language tag: C-SPARQL turns \"lex\"@lang into an IRI and drops tags");
    }
    String lex = NTriples.lexicalForm(term);
    if (lex.indexOf('"') >= 0 || lex.contains("^^")) {
      throw refused(
          line, term, "a lexical form without '\"' or '^^' (C-SPARQL deletes quotes, cuts at ^^)");
    }
    String dt = NTriples.datatype(term);
    return "\"" + lex + "\"^^" + (dt == null ? XSD_STRING : dt);
  }

  /** A term string of C-SPARQL's results as N-Triples text; null when unbound. */
  public static String fromEngine(String value) {
    if (value == null || value.isEmpty()) return null;
    if (value.startsWith("\"")) {
      int cut = value.lastIndexOf("\"^^");
      if (cut > 0) {
        String dt = value.substring(cut + 3);
        String lex = value.substring(1, cut);
        return NTriples.literal(lex, "null".equals(dt) ? null : dt, null);
      }
      return NTriples.literal(value.substring(1, value.endsWith("\"") ? value.length() - 1 : value.length()), null, null);
    }
    if (value.startsWith("_:")) return value;
    if (ANON.matcher(value).matches()) {
      return "_:b" + value.replace('-', 'n').replace(':', 'x');
    }
    return NTriples.iri(value);
  }

  private static IllegalArgumentException refused(int line, String term, String expected) {
    return new IllegalArgumentException(
        "packed batch line " + line + ": C-SPARQL cannot take the term " + term + "; expected "
            + expected);
  }
}
