package org.rspsdk.bridge;

/**
 * Helpers for drivers that turn engine terms back into N-Triples text (result rows must be
 * N-Triples terms: {@code <iri>}, {@code _:label}, {@code "lex"}, {@code "lex"^^<dt>}, {@code
 * "lex"@lang}).
 */
public final class NTriples {
  private NTriples() {}

  private static final String XSD_STRING = "http://www.w3.org/2001/XMLSchema#string";

  public static String iri(String value) {
    return "<" + value + ">";
  }

  public static String bnode(String label) {
    return "_:" + label;
  }

  /** A literal; {@code datatype} and {@code lang} may be null (a plain xsd:string). */
  public static String literal(String lexical, String datatype, String lang) {
    StringBuilder sb = new StringBuilder(lexical.length() + 16);
    sb.append('"');
    for (int k = 0; k < lexical.length(); k++) {
      char c = lexical.charAt(k);
      switch (c) {
        case '"': sb.append("\\\""); break;
        case '\\': sb.append("\\\\"); break;
        case '\n': sb.append("\\n"); break;
        case '\r': sb.append("\\r"); break;
        default: sb.append(c);
      }
    }
    sb.append('"');
    if (lang != null && !lang.isEmpty()) {
      sb.append('@').append(lang);
    } else if (datatype != null && !datatype.isEmpty() && !datatype.equals(XSD_STRING)) {
      sb.append("^^<").append(datatype).append('>');
    }
    return sb.toString();
  }

  public static boolean isIri(String term) {
    return term.startsWith("<") && term.endsWith(">");
  }

  public static boolean isLiteral(String term) {
    return term.startsWith("\"");
  }

  /** The IRI inside {@code <…>}, or the text unchanged when it is not an IRI term. */
  public static String iriValue(String term) {
    return isIri(term) ? term.substring(1, term.length() - 1) : term;
  }

  /** Lexical form of a literal term (escapes undone), or the text unchanged otherwise. */
  public static String lexicalForm(String term) {
    if (!isLiteral(term)) return term;
    int close = term.lastIndexOf('"');
    StringBuilder sb = new StringBuilder(close);
    for (int k = 1; k < close; k++) {
      char c = term.charAt(k);
      if (c == '\\' && k + 1 < close) {
        char e = term.charAt(++k);
        switch (e) {
          case 'n': sb.append('\n'); break;
          case 'r': sb.append('\r'); break;
          case 't': sb.append('\t'); break;
          case 'u':
            sb.append((char) Integer.parseInt(term.substring(k + 1, k + 5), 16));
            k += 4;
            break;
          default: sb.append(e);
        }
      } else {
        sb.append(c);
      }
    }
    return sb.toString();
  }

  /** Datatype IRI of a literal term, null when it has none (plain or language-tagged). */
  public static String datatype(String term) {
    int close = term.lastIndexOf('"');
    if (!isLiteral(term) || close + 3 >= term.length() || term.charAt(close + 1) != '^') {
      return null;
    }
    return term.substring(close + 4, term.length() - 1);
  }
}
