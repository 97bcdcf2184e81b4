package dev.licensing.client;

import static dev.licensing.client.Check.equal;
import static dev.licensing.client.Check.fails;
import static dev.licensing.client.Check.isTrue;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class JsonTest {
    public void testReadsEveryKindOfValue() {
        Object v = Json.parse(" {\"a\": [1, -2.5, 3e2, true, false, null, \"x\"], \"b\": {}, \"c\": []} ");
        Map<?, ?> m = (Map<?, ?>) v;
        equal(List.of("a", "b", "c"), List.copyOf(m.keySet()), "members in order");
        List<?> a = (List<?>) m.get("a");
        equal(1L, a.get(0));
        equal(-2.5, a.get(1));
        equal(300.0, a.get(2));
        equal(true, a.get(3));
        equal(false, a.get(4));
        equal(null, a.get(5));
        equal("x", a.get(6));
        equal(Map.of(), m.get("b"));
        equal(List.of(), m.get("c"));
    }

    public void testEscapes() {
        equal("\" \\ / \b \f \n \r \t", Json.parse("\"\\\" \\\\ \\/ \\b \\f \\n \\r \\t\""));
        equal("é", Json.parse("\"\\u00e9\""));
        equal("é", Json.parse("\"\\u00E9\""));
        // A surrogate pair escaped is one code point.
        String emoji = (String) Json.parse("\"\\ud83d\\ude00\"");
        equal("😀", emoji);
        equal(1, emoji.codePointCount(0, emoji.length()));
        // A lone surrogate is kept, as JSON.parse keeps it, and written back escaped, as JSON.stringify does.
        String lone = (String) Json.parse("\"a\\ud800b\"");
        equal(3, lone.length());
        equal("\"a\\ud800b\"", Json.write(lone));
        equal("\"😀é\"", Json.write("😀é"), "non-ASCII written as it is");
    }

    public void testRefusesWhatJsonParseRefuses() {
        for (String bad : Arrays.asList("", " ", "{", "[1,]", "{\"a\":1,}", "{'a':1}", "[01]", "[1.]", "[.5]", "[-]", "[+1]",
                "[1e]", "[1e+]", "NaN", "Infinity", "[undefined]", "tru", "nul", "\"abc", "\"a\nb\"", "\"\\x\"", "\"\\u12\"",
                "\"\\u12G4\"", "\"\\u١٢٣٤\"", "{\"a\" 1}", "{1:2}", "[1 2]", "1 2", "{} x", "\uFEFF{}", "\u00A0{}", "// c\n1", "[1]]")) {
            fails(Json.ParseException.class, () -> Json.parse(bad));
        }
        fails(IllegalArgumentException.class, () -> Json.parse(null));
    }

    public void testErrorsSayWhere() {
        Json.ParseException e = fails(Json.ParseException.class, () -> Json.parse("[1, 2,, 3]"));
        equal(6, e.offset());
        isTrue(e.getMessage().contains("offset 6"), e.getMessage());
    }

    public void testNumbers() {
        equal(0L, Json.parse("0"));
        equal(0L, Json.parse("-0"));
        equal(Long.MAX_VALUE, Json.parse("9223372036854775807"));
        equal(9.223372036854775808E18, Json.parse("9223372036854775808"), "beyond a long: a double");
        equal(1.5e-7, Json.parse("1.5E-7"));
        equal("[1,2.5,100000000000000000000,-3]", Json.write(List.of(1, 2.5, 1e20, -3L)));
        equal("2", Json.write(2.0), "a whole double as JavaScript writes it");
        fails(IllegalArgumentException.class, () -> Json.write(Double.NaN));
        fails(IllegalArgumentException.class, () -> Json.write(Double.POSITIVE_INFINITY));
    }

    public void testRepeatedMemberKeepsTheLast() {
        equal(Map.of("a", 2L), Json.parse("{\"a\":1,\"a\":2}"));
    }

    public void testDepthIsBounded() {
        String deep = "[".repeat(Json.MAX_DEPTH) + "]".repeat(Json.MAX_DEPTH);
        isTrue(Json.parse(deep) instanceof List, "the deepest allowed nesting reads");
        String deeper = "[".repeat(Json.MAX_DEPTH + 1) + "]".repeat(Json.MAX_DEPTH + 1);
        fails(Json.ParseException.class, () -> Json.parse(deeper));
        String bomb = "[".repeat(100_000);
        fails(Json.ParseException.class, () -> Json.parse(bomb));
    }

    public void testWritesCompactlyAndEscapesControls() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("s", "a\"b\\c\u0001\u001f\n");
        m.put("n", null);
        m.put("l", Arrays.asList(true, false, 'c'));
        m.put("o", Map.of());
        equal("{\"s\":\"a\\\"b\\\\c\\u0001\\u001f\\n\",\"n\":null,\"l\":[true,false,\"c\"],\"o\":{}}", Json.write(m));
        fails(IllegalArgumentException.class, () -> Json.write(new Object()));
        fails(IllegalArgumentException.class, () -> Json.write(Map.of(1, 2)));
    }

    public void testRoundTrip() {
        String text = "{\"a\":[1,-2.5,\"x\\u0000y\",{\"b\":null}],\"c\":\"日本\",\"d\":true}";
        equal(text, Json.write(Json.parse(text)));
    }

    public void testParseObjectRefusesOtherValues() {
        fails(Json.ParseException.class, () -> Json.parseObject("[1]"));
        equal(Map.of("a", 1L), Json.parseObject("{\"a\":1}"));
    }

    public void testSameComparesNumbersByValueAndObjectsUnordered() {
        isTrue(Json.same(1L, 1.0), "1 and 1.0");
        isTrue(Json.same(Json.parse("{\"a\":1,\"b\":[1,2]}"), Json.parse("{\"b\":[1,2.0],\"a\":1}")), "members in any order");
        isTrue(!Json.same(Json.parse("[1,2]"), Json.parse("[2,1]")), "arrays in order");
        isTrue(!Json.same(Json.parse("{\"a\":null}"), Json.parse("{}")), "a null member is a member");
    }
}
