package org.rspsdk.bridge;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Just enough JSON for the bridge: quoting strings into result lines, and reading a driver's
 * configuration. Kept here so the bridge depends on nothing but py4j (drivers share the JVM with
 * engines that bring their own, often ancient, JSON libraries).
 *
 * <p>Objects become {@code LinkedHashMap<String,Object>}, arrays {@code ArrayList<Object>},
 * numbers {@code Long} (integers) or {@code Double}, plus {@code String}, {@code Boolean}, null.
 */
public final class Json {
  private final String s;
  private int i;

  private Json(String s) {
    this.s = s;
  }

  /** Append {@code value} as a JSON string literal. */
  public static void quote(String value, StringBuilder sb) {
    sb.append('"');
    for (int k = 0; k < value.length(); k++) {
      char c = value.charAt(k);
      switch (c) {
        case '"': sb.append("\\\""); break;
        case '\\': sb.append("\\\\"); break;
        case '\n': sb.append("\\n"); break;
        case '\r': sb.append("\\r"); break;
        case '\t': sb.append("\\t"); break;
        default:
          if (c < 0x20) {
            sb.append(String.format("\\u%04x", (int) c));
          } else {
            sb.append(c);
          }
      }
    }
    sb.append('"');
  }

  public static String quote(String value) {
    StringBuilder sb = new StringBuilder(value.length() + 2);
    quote(value, sb);
    return sb.toString();
  }

  /** Serialise maps, lists, strings, numbers, booleans and null. */
  public static String write(Object value) {
    StringBuilder sb = new StringBuilder();
    write(value, sb);
    return sb.toString();
  }

  private static void write(Object v, StringBuilder sb) {
    if (v == null) {
      sb.append("null");
    } else if (v instanceof String) {
      quote((String) v, sb);
    } else if (v instanceof Number || v instanceof Boolean) {
      sb.append(v);
    } else if (v instanceof Map) {
      sb.append('{');
      boolean first = true;
      for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
        if (!first) sb.append(',');
        first = false;
        quote(String.valueOf(e.getKey()), sb);
        sb.append(':');
        write(e.getValue(), sb);
      }
      sb.append('}');
    } else if (v instanceof Iterable) {
      sb.append('[');
      boolean first = true;
      for (Object o : (Iterable<?>) v) {
        if (!first) sb.append(',');
        first = false;
        write(o, sb);
      }
      sb.append(']');
    } else {
      quote(v.toString(), sb);
    }
  }

  /** Parse a JSON text; throws IllegalArgumentException naming the position on bad input. */
  public static Object parse(String text) {
    Json p = new Json(text);
    p.ws();
    Object v = p.value();
    p.ws();
    if (p.i != text.length()) throw p.error("end of input");
    return v;
  }

  /** Parse a JSON object (an empty or blank text is an empty object). */
  @SuppressWarnings("unchecked")
  public static Map<String, Object> parseObject(String text) {
    if (text == null || text.isBlank()) return new LinkedHashMap<>();
    Object v = parse(text);
    if (!(v instanceof Map)) throw new IllegalArgumentException("expected a JSON object: " + text);
    return (Map<String, Object>) v;
  }

  private IllegalArgumentException error(String expected) {
    String near = s.substring(i, Math.min(s.length(), i + 30));
    return new IllegalArgumentException(
        "JSON at position " + i + ": expected " + expected + ", got '" + near + "'");
  }

  private void ws() {
    while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++;
  }

  private Object value() {
    if (i >= s.length()) throw error("a value");
    char c = s.charAt(i);
    if (c == '{') return object();
    if (c == '[') return array();
    if (c == '"') return string();
    if (s.startsWith("true", i)) {
      i += 4;
      return Boolean.TRUE;
    }
    if (s.startsWith("false", i)) {
      i += 5;
      return Boolean.FALSE;
    }
    if (s.startsWith("null", i)) {
      i += 4;
      return null;
    }
    return number();
  }

  private Map<String, Object> object() {
    Map<String, Object> m = new LinkedHashMap<>();
    i++;
    ws();
    if (i < s.length() && s.charAt(i) == '}') {
      i++;
      return m;
    }
    while (true) {
      ws();
      if (i >= s.length() || s.charAt(i) != '"') throw error("a string key");
      String k = string();
      ws();
      if (i >= s.length() || s.charAt(i) != ':') throw error("':'");
      i++;
      ws();
      m.put(k, value());
      ws();
      if (i < s.length() && s.charAt(i) == ',') {
        i++;
        continue;
      }
      if (i < s.length() && s.charAt(i) == '}') {
        i++;
        return m;
      }
      throw error("',' or '}'");
    }
  }

  private List<Object> array() {
    List<Object> a = new ArrayList<>();
    i++;
    ws();
    if (i < s.length() && s.charAt(i) == ']') {
      i++;
      return a;
    }
    while (true) {
      ws();
      a.add(value());
      ws();
      if (i < s.length() && s.charAt(i) == ',') {
        i++;
        continue;
      }
      if (i < s.length() && s.charAt(i) == ']') {
        i++;
        return a;
      }
      throw error("',' or ']'");
    }
  }

  private String string() {
    StringBuilder sb = new StringBuilder();
    i++;
    while (i < s.length()) {
      char c = s.charAt(i++);
      if (c == '"') return sb.toString();
      if (c != '\\') {
        sb.append(c);
        continue;
      }
      if (i >= s.length()) break;
      char e = s.charAt(i++);
      switch (e) {
        case 'n': sb.append('\n'); break;
        case 't': sb.append('\t'); break;
        case 'r': sb.append('\r'); break;
        case 'b': sb.append('\b'); break;
        case 'f': sb.append('\f'); break;
        case 'u':
          if (i + 4 > s.length()) throw error("4 hex digits");
          sb.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
          i += 4;
          break;
        default: sb.append(e);
      }
    }
    throw error("a closing quote");
  }

  private Object number() {
    int start = i;
    if (i < s.length() && (s.charAt(i) == '-' || s.charAt(i) == '+')) i++;
    boolean fraction = false;
    while (i < s.length()) {
      char c = s.charAt(i);
      if (c >= '0' && c <= '9') {
        i++;
      } else if (c == '.' || c == 'e' || c == 'E' || c == '-' || c == '+') {
        fraction = true;
        i++;
      } else {
        break;
      }
    }
    if (start == i) throw error("a value");
    String t = s.substring(start, i);
    try {
      return fraction ? (Object) Double.parseDouble(t) : (Object) Long.parseLong(t);
    } catch (NumberFormatException ex) {
      i = start;
      throw error("a number");
    }
  }
}
