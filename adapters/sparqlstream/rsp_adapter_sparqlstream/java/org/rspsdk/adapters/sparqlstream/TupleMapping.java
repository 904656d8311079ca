package org.rspsdk.adapters.sparqlstream;

import com.hp.hpl.jena.rdf.model.Model;
import com.hp.hpl.jena.rdf.model.ModelFactory;
import com.hp.hpl.jena.rdf.model.Property;
import com.hp.hpl.jena.rdf.model.RDFNode;
import com.hp.hpl.jena.rdf.model.Resource;
import com.hp.hpl.jena.rdf.model.Statement;
import com.hp.hpl.jena.vocabulary.RDF;
import java.io.FileInputStream;
import java.io.FileOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.rspsdk.bridge.NTriples;

/**
 * The R2RML mapping read backwards: from pushed triples to the tuples SPARQLstream consumes.
 *
 * <p>SPARQLstream (morph-streams) never sees triples. Its sources are relational streams (Esper
 * event types, one per {@code rr:logicalTable}), and a SPARQLstream query is rewritten through
 * the R2RML mapping into an EPL statement over those tuples; results are turned back into RDF
 * terms through the same mapping. The benchmark streams are triples, so the driver inverts the
 * mapping: a triple {@code (s, p, o)} belongs to triples map {@code TM} when {@code s} matches the
 * subject map of {@code TM} (a template, whose {@code {column}} parts then give column values)
 * and {@code p}/{@code o} match one of its predicate-object maps ({@code rr:column} gives the
 * column's value from the object, a template or a parent triples map's subject template gives
 * columns from the object IRI, a constant or {@code rr:class} must be equal). All triples of one
 * table at one application time that agree on the table's key ({@code morph:pk}, else the
 * subject template's columns) make one row: the observation, its result and its procedure of an
 * SRBench observation become one {@code lsd_observations} tuple, as in the SRBench database the
 * mapping was written for.
 *
 * <p>The triples maps the engine itself uses are exactly those typed {@code rr:TriplesMap}
 * (morph-core's R2rmlReader selects them by type), so only those are inverted; a triple that no
 * triples map accepts cannot reach SPARQLstream and is counted as unmapped.
 */
final class TupleMapping {
  static final String RR = "http://www.w3.org/ns/r2rml#";
  static final String MORPH = "http://oeg-upm.net/ns/morph#";
  private static final String XSD = "http://www.w3.org/2001/XMLSchema#";
  private static final Pattern TEMPLATE_PART = Pattern.compile("\\{([^{}]+)\\}");

  /** Java types of Esper event properties, by their names in {@code column_types}. */
  static final Map<String, Class<?>> TYPES = new LinkedHashMap<>();

  static {
    TYPES.put("string", String.class);
    TYPES.put("double", Double.class);
    TYPES.put("long", Long.class);
    TYPES.put("int", Integer.class);
    TYPES.put("boolean", Boolean.class);
  }

  /** A subject or object term map, reduced to how it is matched. */
  static final class TermMatcher {
    final String constant; // full term text (N-Triples) when constant
    final Pattern regex; // template as a pattern, groups = columns
    final List<String> columns = new ArrayList<>(); // template columns, or the rr:column
    final boolean isColumn;
    final String datatype;

    TermMatcher(String constant, String template, String column, String datatype) {
      this.constant = constant;
      this.datatype = datatype;
      this.isColumn = column != null;
      if (column != null) {
        columns.add(column);
        regex = null;
      } else if (template != null) {
        StringBuilder re = new StringBuilder("^");
        Matcher m = TEMPLATE_PART.matcher(template);
        int last = 0;
        List<String> parts = new ArrayList<>();
        while (m.find()) {
          re.append(Pattern.quote(template.substring(last, m.start())));
          parts.add(m.group(1));
          re.append("(.+?)");
          last = m.end();
        }
        re.append(Pattern.quote(template.substring(last))).append('$');
        columns.addAll(parts);
        regex = Pattern.compile(re.toString(), Pattern.DOTALL);
      } else {
        regex = null;
      }
    }

    /** Column values the term gives, or null when the term does not match this map. */
    Map<String, String> match(String term) {
      Map<String, String> out = new LinkedHashMap<>();
      if (constant != null) return constant.equals(term) ? out : null;
      if (isColumn) {
        out.put(columns.get(0), NTriples.isIri(term) ? NTriples.iriValue(term) : lexical(term));
        return out;
      }
      if (regex == null || !NTriples.isIri(term)) return null;
      Matcher m = regex.matcher(NTriples.iriValue(term));
      if (!m.matches()) return null;
      for (int i = 0; i < columns.size(); i++) out.put(columns.get(i), m.group(i + 1));
      return out;
    }
  }

  static final class PredicateObject {
    final Set<String> predicates = new LinkedHashSet<>(); // N-Triples IRIs
    final TermMatcher object;
    final String parent; // parent triples map (by resource label), or null

    PredicateObject(TermMatcher object, String parent) {
      this.object = object;
      this.parent = parent;
    }
  }

  static final class TriplesMap {
    final String id;
    final String table;
    final TermMatcher subject;
    final Set<String> classes = new LinkedHashSet<>(); // N-Triples IRIs
    final Set<String> graphs = new LinkedHashSet<>(); // plain IRIs
    final List<PredicateObject> pos = new ArrayList<>();
    List<String> key = List.of();

    TriplesMap(String id, String table, TermMatcher subject) {
      this.id = id;
      this.table = table;
      this.subject = subject;
    }
  }

  final List<TriplesMap> maps = new ArrayList<>();
  final Map<String, TriplesMap> byId = new LinkedHashMap<>();
  /** table → column → Java type of the Esper property. */
  final Map<String, Map<String, Class<?>>> tables = new LinkedHashMap<>();

  private final Model model;

  private TupleMapping(Model model) {
    this.model = model;
  }

  /** Read a mapping (Turtle); {@code columnTypes} overrides the inferred column types. */
  static TupleMapping read(String path, Map<String, Object> columnTypes) throws Exception {
    Model model = ModelFactory.createDefaultModel();
    try (InputStream in = new FileInputStream(path)) {
      model.read(in, null, "TTL");
    }
    TupleMapping m = new TupleMapping(model);
    m.load(columnTypes == null ? Map.of() : columnTypes);
    return m;
  }

  private Property rr(String local) {
    return model.createProperty(RR + local);
  }

  private String literal(Resource r, String local) {
    Statement st = r.getProperty(rr(local));
    if (st == null) return null;
    RDFNode n = st.getObject();
    return n.isLiteral() ? n.asLiteral().getLexicalForm() : n.toString();
  }

  private static String term(RDFNode n) {
    if (n.isURIResource()) return "<" + n.asResource().getURI() + ">";
    if (n.isLiteral()) {
      return NTriples.literal(
          n.asLiteral().getLexicalForm(), n.asLiteral().getDatatypeURI(), n.asLiteral().getLanguage());
    }
    return "_:" + n.asResource().getId().getLabelString();
  }

  private TermMatcher termMap(Resource map, boolean subject) {
    String constant = null;
    Statement c = map.getProperty(rr("constant"));
    if (c != null) constant = term(c.getObject());
    String datatype = null;
    Statement dt = map.getProperty(rr("datatype"));
    if (dt != null && dt.getObject().isURIResource()) datatype = dt.getResource().getURI();
    return new TermMatcher(
        constant, literal(map, "template"), subject ? literal(map, "column") : literal(map, "column"),
        datatype);
  }

  private void load(Map<String, Object> columnTypes) {
    Resource tmType = model.createResource(RR + "TriplesMap");
    for (Resource tm : model.listSubjectsWithProperty(RDF.type, tmType).toList()) {
      Statement lt = tm.getProperty(rr("logicalTable"));
      Statement sm = tm.getProperty(rr("subjectMap"));
      if (lt == null || sm == null) continue;
      Resource ltr = lt.getResource();
      String table = literal(ltr, "tableName");
      if (table == null) continue; // rr:sqlQuery views are not streams
      Resource smr = sm.getResource();
      TriplesMap t = new TriplesMap(tm.toString(), table, termMap(smr, true));
      for (Statement st : smr.listProperties(rr("class")).toList()) {
        t.classes.add(term(st.getObject()));
      }
      for (Statement st : smr.listProperties(rr("graph")).toList()) {
        if (st.getObject().isURIResource()) t.graphs.add(st.getResource().getURI());
      }
      for (Statement st : smr.listProperties(rr("graphMap")).toList()) {
        Statement gc = st.getResource().getProperty(rr("constant"));
        if (gc != null && gc.getObject().isURIResource()) t.graphs.add(gc.getResource().getURI());
      }
      String pk = null;
      Statement pks = ltr.getProperty(model.createProperty(MORPH + "pk"));
      if (pks != null && pks.getObject().isLiteral()) pk = pks.getString();
      List<String> key = new ArrayList<>();
      if (pk != null) {
        for (String k : pk.split(",")) if (!k.trim().isEmpty()) key.add(k.trim());
      }
      t.key = key.isEmpty() ? new ArrayList<>(t.subject.columns) : key;
      for (Statement pst : tm.listProperties(rr("predicateObjectMap")).toList()) {
        Resource po = pst.getResource();
        List<String> preds = new ArrayList<>();
        for (Statement p : po.listProperties(rr("predicate")).toList()) preds.add(term(p.getObject()));
        for (Statement p : po.listProperties(rr("predicateMap")).toList()) {
          Statement pc = p.getResource().getProperty(rr("constant"));
          if (pc != null) preds.add(term(pc.getObject()));
        }
        List<PredicateObject> objs = new ArrayList<>();
        for (Statement o : po.listProperties(rr("object")).toList()) {
          objs.add(new PredicateObject(new TermMatcher(term(o.getObject()), null, null, null), null));
        }
        for (Statement o : po.listProperties(rr("objectMap")).toList()) {
          Resource om = o.getResource();
          Statement parent = om.getProperty(rr("parentTriplesMap"));
          if (parent != null) {
            objs.add(new PredicateObject(null, parent.getObject().toString()));
          } else {
            objs.add(new PredicateObject(termMap(om, false), null));
          }
        }
        for (PredicateObject obj : objs) {
          obj.predicates.addAll(preds);
          t.pos.add(obj);
        }
      }
      maps.add(t);
      byId.put(t.id, t);
    }
    // column types: config, else rr:datatype, else string for template/key columns and double
    // for literal columns (the types of the SRBench Esper event type the mapping was written for)
    for (TriplesMap t : maps) {
      Map<String, Class<?>> cols = tables.computeIfAbsent(t.table, k -> new LinkedHashMap<>());
      for (String c : t.subject.columns) cols.putIfAbsent(c, String.class);
      for (String c : t.key) cols.putIfAbsent(c, String.class);
      for (PredicateObject po : t.pos) {
        if (po.object == null) continue;
        if (po.object.isColumn) {
          Class<?> type = fromDatatype(po.object.datatype);
          String c = po.object.columns.get(0);
          if (!cols.containsKey(c) || cols.get(c) == String.class && type != String.class) {
            cols.put(c, type);
          }
        } else {
          for (String c : po.object.columns) cols.putIfAbsent(c, String.class);
        }
      }
    }
    for (Map.Entry<String, Object> e : columnTypes.entrySet()) {
      if (e.getValue() instanceof Map) {
        Map<String, Class<?>> cols = tables.get(e.getKey());
        if (cols == null) {
          throw new IllegalArgumentException(
              "column_types names table " + e.getKey() + ", which the mapping does not have "
                  + "(its tables: " + tables.keySet() + ")");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> given = (Map<String, Object>) e.getValue();
        for (Map.Entry<String, Object> c : given.entrySet()) cols.put(c.getKey(), type(c.getValue()));
      } else {
        boolean found = false;
        for (Map<String, Class<?>> cols : tables.values()) {
          if (cols.containsKey(e.getKey())) {
            cols.put(e.getKey(), type(e.getValue()));
            found = true;
          }
        }
        if (!found) {
          throw new IllegalArgumentException(
              "column_types names column " + e.getKey() + ", which no table of the mapping has");
        }
      }
    }
    for (TriplesMap t : maps) {
      for (PredicateObject po : t.pos) {
        if (po.parent != null && !byId.containsKey(po.parent)) {
          throw new IllegalArgumentException(
              "triples map " + t.id + " refers to parent triples map " + po.parent
                  + ", which is not an rr:TriplesMap of the mapping");
        }
      }
    }
  }

  private static Class<?> type(Object name) {
    Class<?> t = TYPES.get(String.valueOf(name));
    if (t == null) {
      throw new IllegalArgumentException(
          "column type " + name + " is not one of " + TYPES.keySet());
    }
    return t;
  }

  private static Class<?> fromDatatype(String dt) {
    if (dt == null) return Double.class;
    switch (dt.substring(dt.startsWith(XSD) ? XSD.length() : 0)) {
      case "integer":
      case "long":
      case "int":
      case "short":
      case "byte":
      case "nonNegativeInteger":
      case "positiveInteger":
      case "negativeInteger":
      case "nonPositiveInteger":
      case "unsignedInt":
      case "unsignedLong":
        return Long.class;
      case "double":
      case "float":
      case "decimal":
        return Double.class;
      case "boolean":
        return Boolean.class;
      default:
        return String.class;
    }
  }

  /** The graphs (streams) the triples maps name; empty when none names one. */
  Set<String> graphs() {
    Set<String> out = new LinkedHashSet<>();
    for (TriplesMap t : maps) out.addAll(t.graphs);
    return out;
  }

  /**
   * The mapping with its stream bound to {@code stream}, written to {@code path}. SPARQLstream
   * puts a {@code FROM NAMED STREAM <s> [window]} on exactly the triples maps whose subject map
   * says {@code rr:graph <s>}; for any other IRI the rewritten EPL has no window at all (the
   * relation is read unwindowed). A mapping written for one stream (SRBench's
   * {@code srbench:observations}) therefore serves the pushed stream only when that graph is
   * replaced by the pushed stream's IRI; a subject map naming no graph gets it added. A mapping
   * naming several graphs is ambiguous and refused by the caller.
   */
  void writeBoundTo(String stream, String path) throws Exception {
    Resource tmType = model.createResource(RR + "TriplesMap");
    Resource target = model.createResource(stream);
    for (Resource tm : model.listSubjectsWithProperty(RDF.type, tmType).toList()) {
      Statement sm = tm.getProperty(rr("subjectMap"));
      if (sm == null) continue;
      Resource smr = sm.getResource();
      smr.removeAll(rr("graph"));
      smr.removeAll(rr("graphMap"));
      smr.addProperty(rr("graph"), target);
    }
    for (TriplesMap t : maps) {
      t.graphs.clear();
      t.graphs.add(stream);
    }
    try (OutputStream out = new FileOutputStream(path)) {
      model.write(out, "TTL");
    }
  }

  static String lexical(String term) {
    return NTriples.lexicalForm(term);
  }

  /** Convert a column value (text) to the Java type of its Esper property. */
  static Object convert(String table, String column, Class<?> type, String text) {
    try {
      if (type == String.class) return text;
      if (type == Double.class) return Double.valueOf(text.trim());
      if (type == Long.class) return Long.valueOf(text.trim());
      if (type == Integer.class) return Integer.valueOf(text.trim());
      if (type == Boolean.class) {
        String t = text.trim();
        if (t.equals("true") || t.equals("1")) return Boolean.TRUE;
        if (t.equals("false") || t.equals("0")) return Boolean.FALSE;
        throw new NumberFormatException(t);
      }
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "column " + table + "." + column + " is " + type.getSimpleName().toLowerCase()
              + " (from the mapping's rr:datatype, or double for a literal column without one), "
              + "but a triple gives it '" + text + "': set engine config column_types {\""
              + column + "\": \"string\"} or give the object map an rr:datatype");
    }
    return text;
  }

  /** Triples maps a stream's triples can belong to (graph = stream). */
  List<TriplesMap> forStream(String stream) {
    List<TriplesMap> out = new ArrayList<>();
    for (TriplesMap t : maps) if (t.graphs.contains(stream)) out.add(t);
    return out;
  }

  /**
   * The column values a triple gives within triples map {@code t}: the subject's template columns
   * plus what the predicate-object map gives; null when the triple is not one of {@code t}'s.
   */
  static Map<String, String> apply(TriplesMap t, Map<String, TriplesMap> byId, String s, String p, String o) {
    Map<String, String> subj = t.subject.match(s);
    if (subj == null) return null;
    if (p.equals("<" + RDF.type.getURI() + ">") && t.classes.contains(o)) return subj;
    Map<String, String> best = null;
    for (PredicateObject po : t.pos) {
      if (!po.predicates.contains(p)) continue;
      Map<String, String> obj;
      if (po.parent != null) {
        TriplesMap parent = byId.get(po.parent);
        obj = parent.table.equals(t.table) ? parent.subject.match(o) : null;
      } else {
        obj = po.object.match(o);
      }
      if (obj == null) continue;
      if (!consistent(subj, obj)) continue;
      Map<String, String> all = new LinkedHashMap<>(subj);
      all.putAll(obj);
      if (best == null || all.size() > best.size()) best = all;
    }
    return best;
  }

  static boolean consistent(Map<String, String> a, Map<String, String> b) {
    for (Map.Entry<String, String> e : b.entrySet()) {
      String v = a.get(e.getKey());
      if (v != null && !v.equals(e.getValue())) return false;
    }
    return true;
  }

  static String keyOf(TriplesMap t, Map<String, String> values) {
    StringBuilder sb = new StringBuilder(t.table);
    Collection<String> key = t.key;
    boolean complete = true;
    for (String k : key) if (!values.containsKey(k)) complete = false;
    if (!complete) key = t.subject.columns;
    for (String k : key) sb.append('\u0000').append(k).append('=').append(values.get(k));
    return sb.toString();
  }
}
