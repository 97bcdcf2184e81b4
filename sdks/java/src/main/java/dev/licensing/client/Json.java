package dev.licensing.client;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON reader and writer (RFC 8259), so the library needs nothing but the JDK.
 *
 * <p>Reading gives {@code Map<String, Object>} (insertion-ordered) for objects, {@code List<Object>}
 * for arrays, {@code String}, {@code Boolean}, {@code null}, and for numbers a {@code Long} when the
 * number is written without a fraction or exponent and fits, else a {@code Double}. Anything
 * JavaScript's {@code JSON.parse} refuses is refused here too (trailing commas, comments, single
 * quotes, leading zeros, raw control characters in strings, text after the value), with a
 * {@link ParseException} naming the offset. A repeated member name keeps its last value, as
 * {@code JSON.parse} does. Nesting deeper than {@value #MAX_DEPTH} is refused rather than
 * overflowing the stack.
 *
 * <p>Writing accepts the same types plus any {@code Map} with string keys, any {@code Iterable},
 * arrays of objects, any {@code Number} and {@code Character}; it escapes like
 * {@code JSON.stringify} (lone surrogates as {@code \\uXXXX}).
 */
public final class Json {
    /** The deepest nesting of arrays and objects read. */
    public static final int MAX_DEPTH = 512;

    private Json() {}

    /** Why a text is not JSON, and where. */
    public static final class ParseException extends IllegalArgumentException {
        private static final long serialVersionUID = 1L;
        private final int offset;

        ParseException(String message, int offset) {
            super(message + " at offset " + offset);
            this.offset = offset;
        }

        /** The index in the text (UTF-16 units) where reading stopped. */
        public int offset() {
            return offset;
        }
    }

    /** Reads one JSON value that must fill the whole text (white space around it allowed). */
    public static Object parse(String text) {
        if (text == null) throw new IllegalArgumentException("no JSON text (null)");
        Reader reader = new Reader(text);
        reader.skipSpace();
        Object value = reader.value(0);
        reader.skipSpace();
        if (reader.pos < text.length()) throw reader.error("unexpected text after the JSON value");
        return value;
    }

    /** Reads a JSON object; anything else (an array, a string…) is a ParseException. */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> parseObject(String text) {
        Object value = parse(text);
        if (!(value instanceof Map)) throw new ParseException("expected a JSON object, got " + typeName(value), 0);
        return (Map<String, Object>) value;
    }

    /** The compact JSON text of a value (no spaces), as JSON.stringify writes it. */
    public static String write(Object value) {
        StringBuilder out = new StringBuilder();
        write(value, out, 0);
        return out.toString();
    }

    /** "object", "array", "string", "number", "boolean" or "null": for messages. */
    public static String typeName(Object value) {
        if (value == null) return "null";
        if (value instanceof Map) return "object";
        if (value instanceof List) return "array";
        if (value instanceof String) return "string";
        if (value instanceof Number) return "number";
        if (value instanceof Boolean) return "boolean";
        return value.getClass().getSimpleName();
    }

    /**
     * Whether two read values are the same JSON: numbers by value (1 and 1.0 are equal), objects
     * whatever their members' order, arrays in order.
     */
    public static boolean same(Object a, Object b) {
        if (a == null || b == null) return a == b;
        if (a instanceof Number && b instanceof Number) return numberValue((Number) a).compareTo(numberValue((Number) b)) == 0;
        if (a instanceof Map && b instanceof Map) {
            Map<?, ?> x = (Map<?, ?>) a;
            Map<?, ?> y = (Map<?, ?>) b;
            if (x.size() != y.size()) return false;
            for (Map.Entry<?, ?> e : x.entrySet()) {
                if (!y.containsKey(e.getKey()) || !same(e.getValue(), y.get(e.getKey()))) return false;
            }
            return true;
        }
        if (a instanceof List && b instanceof List) {
            List<?> x = (List<?>) a;
            List<?> y = (List<?>) b;
            if (x.size() != y.size()) return false;
            for (int i = 0; i < x.size(); i++) if (!same(x.get(i), y.get(i))) return false;
            return true;
        }
        return a.equals(b);
    }

    private static BigDecimal numberValue(Number n) {
        if (n instanceof BigDecimal) return (BigDecimal) n;
        if (n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte) return BigDecimal.valueOf(n.longValue());
        double d = n.doubleValue();
        if (Double.isNaN(d) || Double.isInfinite(d)) return BigDecimal.ZERO;
        return new BigDecimal(d);
    }

    private static final class Reader {
        final String text;
        int pos;

        Reader(String text) {
            this.text = text;
        }

        ParseException error(String message) {
            return new ParseException(message, pos);
        }

        void skipSpace() {
            while (pos < text.length()) {
                char c = text.charAt(pos);
                // JSON's white space only: a no-break space or a BOM is not (JSON.parse refuses them too).
                if (c != ' ' && c != '\t' && c != '\n' && c != '\r') return;
                pos++;
            }
        }

        Object value(int depth) {
            if (pos >= text.length()) throw error("unexpected end of JSON");
            char c = text.charAt(pos);
            switch (c) {
                case '{':
                    return object(depth + 1);
                case '[':
                    return array(depth + 1);
                case '"':
                    return string();
                case 't':
                    return literal("true", Boolean.TRUE);
                case 'f':
                    return literal("false", Boolean.FALSE);
                case 'n':
                    return literal("null", null);
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) return number();
                    throw error("unexpected character '" + printable(c) + "'");
            }
        }

        Object literal(String word, Object value) {
            if (!text.startsWith(word, pos)) throw error("unexpected word");
            pos += word.length();
            return value;
        }

        Map<String, Object> object(int depth) {
            if (depth > MAX_DEPTH) throw error("JSON nested deeper than " + MAX_DEPTH);
            pos++; // {
            Map<String, Object> map = new LinkedHashMap<>();
            skipSpace();
            if (peek() == '}') {
                pos++;
                return map;
            }
            while (true) {
                skipSpace();
                if (peek() != '"') throw error("expected a member name in double quotes");
                String name = string();
                skipSpace();
                if (peek() != ':') throw error("expected ':' after a member name");
                pos++;
                skipSpace();
                map.put(name, value(depth));
                skipSpace();
                char c = peek();
                pos++;
                if (c == '}') return map;
                if (c != ',') {
                    pos--;
                    throw error("expected ',' or '}' in an object");
                }
            }
        }

        List<Object> array(int depth) {
            if (depth > MAX_DEPTH) throw error("JSON nested deeper than " + MAX_DEPTH);
            pos++; // [
            List<Object> list = new ArrayList<>();
            skipSpace();
            if (peek() == ']') {
                pos++;
                return list;
            }
            while (true) {
                skipSpace();
                list.add(value(depth));
                skipSpace();
                char c = peek();
                pos++;
                if (c == ']') return list;
                if (c != ',') {
                    pos--;
                    throw error("expected ',' or ']' in an array");
                }
            }
        }

        /** The next character; the end of the text is an error wherever this is asked. */
        char peek() {
            if (pos >= text.length()) throw error("unexpected end of JSON");
            return text.charAt(pos);
        }

        String string() {
            pos++; // opening quote
            StringBuilder out = null;
            int start = pos;
            while (true) {
                if (pos >= text.length()) throw error("unterminated string");
                char c = text.charAt(pos);
                if (c == '"') {
                    String s = out == null ? text.substring(start, pos) : out.append(text, start, pos).toString();
                    pos++;
                    return s;
                }
                if (c < 0x20) throw error("control character U+" + hex4(c) + " in a string (escape it)");
                if (c != '\\') {
                    pos++;
                    continue;
                }
                if (out == null) out = new StringBuilder();
                out.append(text, start, pos);
                pos++;
                if (pos >= text.length()) throw error("unterminated escape");
                char e = text.charAt(pos++);
                switch (e) {
                    case '"': out.append('"'); break;
                    case '\\': out.append('\\'); break;
                    case '/': out.append('/'); break;
                    case 'b': out.append('\b'); break;
                    case 'f': out.append('\f'); break;
                    case 'n': out.append('\n'); break;
                    case 'r': out.append('\r'); break;
                    case 't': out.append('\t'); break;
                    case 'u':
                        // Java strings are UTF-16 as JSON's escapes are: a pair \\uD83D\\uDE00 becomes one
                        // code point by itself, and a lone surrogate is kept, as JSON.parse keeps it.
                        out.append(hexChar());
                        break;
                    default:
                        pos--;
                        throw error("invalid escape '\\" + printable(e) + "'");
                }
                start = pos;
            }
        }

        char hexChar() {
            if (pos + 4 > text.length()) throw error("incomplete \\u escape");
            int v = 0;
            for (int i = 0; i < 4; i++) {
                int d = Character.digit(text.charAt(pos), 16);
                // Character.digit also reads full-width and other Unicode digits: only ASCII hex here.
                if (d < 0 || text.charAt(pos) > 'f') throw error("invalid \\u escape");
                v = v * 16 + d;
                pos++;
            }
            return (char) v;
        }

        Object number() {
            int start = pos;
            if (text.charAt(pos) == '-') pos++;
            if (pos >= text.length()) throw error("a number needs digits");
            char c = text.charAt(pos);
            if (c == '0') {
                pos++;
                if (pos < text.length() && isDigit(text.charAt(pos))) throw error("leading zero in a number");
            } else if (c >= '1' && c <= '9') {
                digits();
            } else {
                throw error("a number needs digits");
            }
            boolean integral = true;
            if (pos < text.length() && text.charAt(pos) == '.') {
                integral = false;
                pos++;
                if (pos >= text.length() || !isDigit(text.charAt(pos))) throw error("a fraction needs digits");
                digits();
            }
            if (pos < text.length() && (text.charAt(pos) == 'e' || text.charAt(pos) == 'E')) {
                integral = false;
                pos++;
                if (pos < text.length() && (text.charAt(pos) == '+' || text.charAt(pos) == '-')) pos++;
                if (pos >= text.length() || !isDigit(text.charAt(pos))) throw error("an exponent needs digits");
                digits();
            }
            String literal = text.substring(start, pos);
            if (integral) {
                try {
                    return Long.parseLong(literal);
                } catch (NumberFormatException tooLarge) {
                    // Beyond a long: a double, as JavaScript reads every number.
                }
            }
            return Double.parseDouble(literal);
        }

        void digits() {
            while (pos < text.length() && isDigit(text.charAt(pos))) pos++;
        }

        static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }
    }

    private static void write(Object value, StringBuilder out, int depth) {
        if (depth > MAX_DEPTH) throw new IllegalArgumentException("value nested deeper than " + MAX_DEPTH + " (a cycle?)");
        if (value == null) {
            out.append("null");
        } else if (value instanceof String || value instanceof Character) {
            quote(value.toString(), out);
        } else if (value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Double || value instanceof Float) {
            double d = ((Number) value).doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d)) throw new IllegalArgumentException("JSON has no NaN or Infinity");
            // A whole double is written as JavaScript writes it: 2.0 as 2, 1e20 in full.
            if (d == Math.rint(d) && Math.abs(d) < 1e21) out.append(new BigDecimal(d).toPlainString());
            else out.append(d);
        } else if (value instanceof BigDecimal) {
            out.append(((BigDecimal) value).toString());
        } else if (value instanceof Number) {
            out.append(((Number) value).toString());
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : ((Map<?, ?>) value).entrySet()) {
                if (!(e.getKey() instanceof String)) throw new IllegalArgumentException("JSON object keys must be strings");
                if (!first) out.append(',');
                first = false;
                quote((String) e.getKey(), out);
                out.append(':');
                write(e.getValue(), out, depth + 1);
            }
            out.append('}');
        } else if (value instanceof Iterable) {
            out.append('[');
            boolean first = true;
            for (Object item : (Iterable<?>) value) {
                if (!first) out.append(',');
                first = false;
                write(item, out, depth + 1);
            }
            out.append(']');
        } else if (value instanceof Object[]) {
            write(java.util.Arrays.asList((Object[]) value), out, depth);
        } else {
            throw new IllegalArgumentException("cannot write a " + value.getClass().getName() + " as JSON");
        }
    }

    private static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\b': out.append("\\b"); break;
                case '\f': out.append("\\f"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        out.append("\\u").append(hex4(c));
                    } else if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                        out.append(c).append(s.charAt(++i));
                    } else if (Character.isSurrogate(c)) {
                        // A lone surrogate has no UTF-8 form: escaped, as JSON.stringify does.
                        out.append("\\u").append(hex4(c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    private static String hex4(char c) {
        String h = Integer.toHexString(c);
        return "0000".substring(h.length()) + h;
    }

    private static String printable(char c) {
        return c < 0x20 || c == 0x7f ? "U+" + hex4(c) : String.valueOf(c);
    }

    /** An unmodifiable copy, for records that hand out what they were given. */
    static Map<String, Object> frozen(Map<String, Object> map) {
        return map == null ? null : Collections.unmodifiableMap(new LinkedHashMap<>(map));
    }
}
