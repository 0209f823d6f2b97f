import FlowKit
import Testing

/// `JSONParser`: what flow's own writer produces reads back, and what is not JSON is refused.
@Suite struct JSONParserTests {
    @Test func writerOutputReadsBack() {
        let value = JSONValue.object([
            ("text", .string("quote \" backslash \\ tab \t newline \n ✓ é 🎉 \u{1}")),
            ("int", .int(-42)), ("big", .int(Int.max)), ("double", .double(1_763_780_000.123456)),
            ("small", .double(1e-05)), ("flags", .array([.bool(true), .bool(false), .null])),
            ("nested", .object([("empty", .array([])), ("none", .object([]))])),
        ])
        #expect(JSONParser.parse(value.rendered().utf8) == value)
        #expect(JSONParser.parse(value.rendered(pretty: true).utf8) == value)
    }

    @Test func escapesAndNumbers() {
        #expect(JSONParser.parse(#""a\/b\u00e9\ud83c\udf89""#.utf8) == .string("a/bé🎉"))
        #expect(JSONParser.parse(" 12 ".utf8) == .int(12))
        #expect(JSONParser.parse("1.5e3".utf8) == .double(1500))
        #expect(JSONParser.parse("-0.25".utf8) == .double(-0.25))
        #expect(JSONParser.parse("99999999999999999999".utf8) == .double(1e20), "past Int: a double")
        #expect(JSONParser.parse(#"{"a": 1, "b": [2]}"#.utf8)?["b"] == .array([.int(2)]))
    }

    @Test(arguments: [
        "", " ", "{", "}", "[1,]", "{\"a\":}", "{\"a\" 1}", "{a: 1}", "01", "1.", ".5", "1e", "-", "+1",
        "tru", "nul", "\"unterminated", "\"bad \\x escape\"", "\"\\ud83c alone\"", "\"\\udf89\"", "\"raw \n newline\"",
        "1 2", "{} x", "NaN", "Infinity",
    ])
    func notJSONIsRefused(_ text: String) {
        #expect(JSONParser.parse(text.utf8) == nil, "\(text.debugDescription)")
    }

    @Test func deepNestingIsRefusedNotACrash() {
        let deep = String(repeating: "[", count: 100_000) + String(repeating: "]", count: 100_000)
        #expect(JSONParser.parse(deep.utf8) == nil)
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect(JSONParser.parse(fine.utf8) != nil)
    }
}
