package org.rspsdk.bridge;

/** Receives the triples of a packed batch one by one, in order (see {@link Packed#forEach}). */
@FunctionalInterface
public interface TripleSink {
  /** Terms are N-Triples text: {@code <iri>}, {@code _:b}, {@code "lex"^^<dt>}, {@code "lex"@en}. */
  void accept(long tAppMs, String s, String p, String o) throws Exception;
}
