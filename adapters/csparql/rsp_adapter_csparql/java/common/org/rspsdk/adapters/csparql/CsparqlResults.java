package org.rspsdk.adapters.csparql;

import eu.larkc.csparql.common.RDFTable;
import eu.larkc.csparql.common.RDFTuple;
import java.lang.reflect.Field;
import java.util.ArrayList;
import java.util.List;

/**
 * C-SPARQL's result tables as the bridge's rows. 0.9 and 0.9.7 put their engines in different
 * packages but share {@code eu.larkc.csparql.common}'s tables, so both drivers use this.
 *
 * <p>A tuple's fields are read from its {@code fields} list, not with {@code get(i)}: 0.9's
 * {@code RDFTuple.get} returns null for every index past 2 (a triple's three positions), so a
 * projection of more than three variables lost all but its first three (CityBench Q4 and Q5:
 * 99 bindings of {@code ?evtId ?title ?node} where the query selects eight variables).
 */
public final class CsparqlResults {
  private CsparqlResults() {}

  private static final Field FIELDS = fieldsOf();

  /** The rows of a result table as N-Triples terms (null: unbound), {@code width} columns. */
  public static List<String[]> rows(RDFTable table, int width) {
    List<String[]> rows = new ArrayList<>(table.size());
    for (RDFTuple tuple : table) {
      List<String> fields = fields(tuple);
      String[] row = new String[width];
      for (int i = 0; i < width && i < fields.size(); i++) {
        row[i] = CsparqlTerms.fromEngine(fields.get(i));
      }
      rows.add(row);
    }
    return rows;
  }

  @SuppressWarnings("unchecked")
  private static List<String> fields(RDFTuple tuple) {
    try {
      return (List<String>) FIELDS.get(tuple);
    } catch (IllegalAccessException e) {
      throw new IllegalStateException("cannot read RDFTuple.fields", e);
    }
  }

  private static Field fieldsOf() {
    try {
      Field f = RDFTuple.class.getDeclaredField("fields");
      f.setAccessible(true);
      return f;
    } catch (NoSuchFieldException e) {
      throw new IllegalStateException("this C-SPARQL's RDFTuple has no fields list", e);
    }
  }
}
