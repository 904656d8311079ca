package org.rspsdk.glue;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Function;

/**
 * A driver's registered streams by IRI: registering twice keeps the first engine stream, and
 * pushing to a stream that was never registered fails with the IRI (the bridge's contract). SDK
 * glue: a manifest gets it with {@code [glue] sdk = ["driver"]}.
 *
 * @param <S> the engine's stream type
 */
public final class Streams<S> {
  private final Map<String, S> byIri = new LinkedHashMap<>();

  /** The engine stream of {@code iri}, made by {@code create} on the first registration. */
  public S register(String iri, Function<String, S> create) {
    return byIri.computeIfAbsent(iri, create);
  }

  /** The registered engine stream of {@code iri}; IllegalArgumentException when there is none. */
  public S get(String iri) {
    S stream = byIri.get(iri);
    if (stream == null) {
      throw new IllegalArgumentException("stream " + iri + " is not registered");
    }
    return stream;
  }
}
