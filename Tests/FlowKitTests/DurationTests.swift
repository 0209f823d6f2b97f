@testable import FlowKit
import Testing

/// `250ms`, `1s`, `1.5s`, `2m`, `1h30m`, or a bare number of seconds.
@Suite struct DurationTests {
    @Test(arguments: [
        ("250ms", 0.25), ("1s", 1), ("1.5s", 1.5), ("2m", 120), ("1h30m", 5400), ("1h", 3600), ("10", 10), ("0", 0),
        ("0.5", 0.5), ("1h2m3s4ms", 3723.004), ("  5s  ", 5), ("90s", 90), ("0s", 0), ("1m30s", 90),
    ])
    func parses(text: String, seconds: Double) throws {
        let duration = try #require(Duration.parse(text))
        #expect(abs(duration.seconds - seconds) < 1e-9)
    }

    @Test(arguments: [
        "", "   ", "-1", "-5s", "abc", "5 minutes", "30m1h", "1h1h", "1s1s", "1.2.3s", "s", "5d", "1h 30m", "ms", "inf", "nan",
        "1S", ".s",
    ])
    func rejects(text: String) {
        #expect(Duration.parse(text) == nil, "`\(text)` should not parse")
    }

    @Test(arguments: [
        (0.0, "0s"), (0.25, "250ms"), (1, "1s"), (1.5, "1.5s"), (59, "59s"), (60, "1m"), (90, "1m30s"), (3600, "1h"),
        (5400, "1h30m"), (3661, "1h1m1s"), (2.75, "2.75s"),
    ])
    func compactForm(seconds: Double, text: String) {
        #expect(Duration.seconds(seconds).compact == text)
    }

    @Test(arguments: ["250ms", "1s", "1.5s", "2m", "1h30m", "1h1m1s"])
    func compactFormParsesBack(text: String) throws {
        let duration = try #require(Duration.parse(text))
        #expect(duration.compact == text)
        #expect(Duration.parse(duration.compact) == duration)
    }

    /// Trimming works on bytes: spaces and tabs go from both ends, anything else stays,
    /// including non-ASCII text and inner spaces.
    @Test(arguments: [
        ("", ""), ("   ", ""), ("\t x \t", "x"), ("a b", "a b"), ("  héllo wörld  ", "héllo wörld"), ("é", "é"),
        (" \u{00A0}x\u{00A0} ", "\u{00A0}x\u{00A0}"), ("\n x", "\n x"),
    ])
    func trimmingSpacesAndBlank(text: String, trimmed: String) {
        #expect(String(text.trimmingSpaces) == trimmed)
        #expect(text.isBlank == trimmed.isEmpty)
    }
}
