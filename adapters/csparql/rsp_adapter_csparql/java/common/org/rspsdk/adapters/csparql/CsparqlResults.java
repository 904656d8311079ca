package org.rspsdk.adapters.csparql;

import eu.larkc.csparql.common.RDFTable;
import eu.larkc.csparql.common.RDFTuple;
import java.util.ArrayList;
import java.util.List;

/**
 * C-SPARQL's result tables as the bridge's rows. 0.9 and 0.9.7 put their engines in different
 * packages but share {@code eu.larkc.csparql.common}'s tables, so both drivers use this.
 */
public final class CsparqlResults {
  private CsparqlResults() {}

  /** The rows of a result table as N-Triples terms (null: unbound), {@code width} columns. */
  public static List<String[]> rows(RDFTable table, int width) {
    List<String[]> rows = new ArrayList<>(table.size());
    for (RDFTuple tuple : table) {
      String[] row = new String[width];
      for (int i = 0; i < width; i++) row[i] = CsparqlTerms.fromEngine(tuple.get(i));
      rows.add(row);
    }
    return rows;
  }
}
