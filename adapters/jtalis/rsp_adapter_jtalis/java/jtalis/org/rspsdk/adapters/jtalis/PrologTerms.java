package org.rspsdk.adapters.jtalis;

import java.util.Set;
import org.rspsdk.bridge.NTriples;

/**
 * N-Triples terms as the Prolog terms ETALIS' EP-SPARQL queries match against: the same mapping
 * as the etalis adapter's shim ({@code rsp_adapter_etalis.shim.prolog_term}), so both adapters
 * feed ETALIS identical events. IRIs are atoms, numeric literals Prolog numbers (EP-SPARQL
 * FILTERs do arithmetic with {@code is}), other literals {@code literal(Lex)}, {@code
 * literal(lang(L,Lex))} or {@code literal(type(DT,Lex))}, blank nodes {@code bnode(Label)}.
 */
final class PrologTerms {
  private static final String XSD = "http://www.w3.org/2001/XMLSchema#";
  private static final Set<String> INTEGERS =
      Set.of(
          "integer", "int", "long", "short", "byte", "nonNegativeInteger", "nonPositiveInteger",
          "negativeInteger", "positiveInteger", "unsignedLong", "unsignedInt", "unsignedShort",
          "unsignedByte");
  private static final Set<String> DECIMALS = Set.of("decimal", "double", "float");

  private PrologTerms() {}

  /**
   * {@code text} as a quoted Prolog atom (ISO escapes), in ASCII: a character beyond it is
   * written {@code \\xHEX\\}, because InterProlog's Prolog side decodes a goal string's modified
   * UTF-8 only up to two bytes per character (code points below 256).
   */
  static String quote(String text) {
    StringBuilder sb = new StringBuilder(text.length() + 2).append('\'');
    text.codePoints()
        .forEach(
            c -> {
              switch (c) {
                case '\\' -> sb.append("\\\\");
                case '\'' -> sb.append("\\'");
                case '\n' -> sb.append("\\n");
                case '\r' -> sb.append("\\r");
                case '\t' -> sb.append("\\t");
                default -> {
                  if (c < 128) sb.append((char) c);
                  else sb.append("\\x").append(Integer.toHexString(c)).append('\\');
                }
              }
            });
    return sb.append('\'').toString();
  }

  /** One N-Triples term (IRI, blank node or literal) as Prolog text. */
  static String term(String nt) {
    String t = nt.strip();
    if (t.startsWith("<")) return quote(NTriples.iriValue(t));
    if (t.startsWith("_:")) return "bnode(" + quote(t.substring(2)) + ")";
    if (!t.startsWith("\"")) throw new IllegalArgumentException("not an N-Triples term: " + t);
    String lex = NTriples.lexicalForm(t);
    int close = t.lastIndexOf('"');
    if (close + 1 < t.length() && t.charAt(close + 1) == '@') {
      return "literal(lang(" + quote(t.substring(close + 2)) + "," + quote(lex) + "))";
    }
    String dt = NTriples.datatype(t);
    if (dt != null && dt.startsWith(XSD)) {
      String local = dt.substring(XSD.length());
      String number = number(lex, local);
      if (number != null) return number;
      if (local.equals("string")) return "literal(" + quote(lex) + ")";
    }
    if (dt != null) return "literal(type(" + quote(dt) + "," + quote(lex) + "))";
    return "literal(" + quote(lex) + ")";
  }

  /** Prolog syntax for a numeric literal (null: not numeric, or not a finite number). */
  static String number(String lex, String xsdLocal) {
    try {
      if (INTEGERS.contains(xsdLocal)) return new java.math.BigInteger(lex.strip()).toString();
      if (!DECIMALS.contains(xsdLocal)) return null;
      double v = Double.parseDouble(lex.strip());
      if (Double.isNaN(v) || Double.isInfinite(v)) return null;
      return prologFloat(v);
    } catch (NumberFormatException e) {
      return null;
    }
  }

  /** A double in Prolog float syntax (Java's shortest round-trip digits: the same value). */
  private static String prologFloat(double v) {
    return Double.toString(v).replace("E", "e"); // "1.0E-5" -> "1.0e-5"; always has a '.'
  }
}
