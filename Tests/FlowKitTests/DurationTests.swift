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
        // Outside the documented grammar, though `Double(_:)` or YAML would take them.
        ".5s", "5.s", ".5", "5.", "1e3", "1E3", "1e300", "-0", "+5", "0x10", "1_000", "5sec", "1m5",
    ])
    func rejects(text: String) {
        #expect(Duration.parse(text) == nil, "`\(text)` should not parse")
    }

    /// A duration written as people and other tools write it gets flow's spelling as a
    /// "did you mean"; the suggestion always parses, and nothing is suggested for text
    /// that is no duration, is ambiguous (`1m1m`) or parses already. A last number without
    /// its unit is read as a clock reads it (`1h30`: `1h30m`): it is offered, not taken, so
    /// a user who meant otherwise sees what flow would read.
    @Test(arguments: [
        ("10 s", "10s"), ("1min", "1m"), ("5 minutes", "5m"), ("1S", "1s"), ("1h 30m", "1h30m"), ("30m1h", "1h30m"),
        (".5s", "0.5s"), ("5.s", "5s"), ("7d", "168h"), ("2 hours", "2h"), ("100msec", "100ms"),
        ("5sec", "5s"), (" 1 H ", "1h"), ("1h30", "1h30m"), ("2m30", "2m30s"), ("1s500", "1s500ms"), ("1 hour 30", "1h30m"),
    ])
    func suggestsFlowsSpelling(text: String, suggestion: String) throws {
        #expect(Duration.suggestion(for: text) == suggestion)
        #expect(Duration.parse(suggestion) != nil)
    }

    @Test(arguments: ["5s", "500", "", "-5s", "abc", "1m1m", "1ms5", "30 1h", "1h30 5", "1e3", "0x10", "1.5d", "1 day 1 d", "1 day 2h", "5 parsecs", "1..5s",
                      "99999999999999999999d", "50000d", "s", "1h30m extra"])
    func suggestsNothingElse(text: String) {
        #expect(Duration.suggestion(for: text) == nil, "`\(text)`")
    }

    /// Why a text is not a duration decides the message.
    @Test(arguments: [
        ("", Duration.ParseFailure.empty), (" \t", .empty), ("-0", .negative), ("-5s", .negative), (".5s", .malformed),
        ("1e20", .malformed), ("99999999999999999999999h", .tooLong), ("9223372036854775807", .tooLong),
        ("1000000h1ms", .tooLong), ("1000001h", .tooLong), ("60000001m", .tooLong), ("3600000000.5", .tooLong),
        ("99999999999999999999999h5x", .malformed),
    ])
    func failureKinds(text: String, failure: Duration.ParseFailure) {
        #expect(Duration.parseChecked(text) == .failure(failure))
    }

    /// The maximum, written any way, is accepted, and is exact.
    @Test(arguments: ["1000000h", "60000000m", "3600000000s", "3600000000", "999999h59m59.999999999s"])
    func upToTheMaximum(text: String) throws {
        let duration = try #require(Duration.parse(text))
        #expect(duration <= Duration.maximum)
        #expect(Duration.parse(Duration.maximumText) == Duration.maximum)
    }

    /// Values are kept in whole nanoseconds, exactly (no binary fractions of a second).
    @Test(arguments: [
        ("1m30s500ms", Duration.milliseconds(90_500)), ("3599.9s", .milliseconds(3_599_900)), ("1.5ms", .microseconds(1_500)),
        ("0.1", .milliseconds(100)), ("1.000000001s", .nanoseconds(1_000_000_001)), ("0.5h", .seconds(1800)),
        ("1h2m3s4ms", .milliseconds(3_723_004)), ("007s", .seconds(7)),
    ])
    func exactValues(text: String, duration: Duration) {
        #expect(Duration.parse(text) == duration)
    }

    /// The compact form is the exact value: it used to round (`1m30s500ms` printed as
    /// `1m31s`, `3599.9s` as `1h`, `1.5ms` as `2ms`).
    @Test(arguments: [
        ("1m30s500ms", "1m30.5s"), ("3599.9s", "59m59.9s"), ("1.5ms", "1.5ms"), ("0.000001s", "0.001ms"),
        ("3600.5", "1h0.5s"), ("59.999s", "59.999s"), ("1000000h", "1000000h"), ("0.0000000001s", "0s"),
        ("1.000000001s", "1.000000001s"), ("61m", "1h1m"), ("0", "0s"),
    ])
    func compactIsExact(text: String, compact: String) throws {
        let duration = try #require(Duration.parse(text))
        #expect(duration.compact == compact)
        #expect(Duration.parse(duration.compact) == duration, "the compact form parses back")
    }

    /// Sums saturate at the maximum instead of trapping.
    /// Whole nanoseconds are exact where seconds as a Double are not (plan JSON gives both).
    @Test(arguments: [
        ("0.000000001s", Int64(1)), ("1.5ms", 1_500_000), ("1m30.5s", 90_500_000_000), ("0", 0),
        ("999999h59m59.999999999s", 3_599_999_999_999_999_999), ("1000000h", 3_600_000_000_000_000_000),
    ])
    func wholeNanoseconds(text: String, nanoseconds: Int64) throws {
        #expect(try #require(Duration.parse(text)).wholeNanoseconds == nanoseconds)
    }

    @Test func saturatingAdd() {
        #expect(Duration.seconds(1).saturatingAdd(.seconds(2)) == .seconds(3))
        #expect(Duration.maximum.saturatingAdd(.maximum) == .maximum)
        #expect(Duration.maximum.saturatingAdd(.nanoseconds(1)) == .maximum)
        #expect(Duration.seconds(Int64.max).saturatingAdd(.seconds(Int64.max)) == .maximum)
    }

    /// A large backoff reaches infinity in Double; the delay stops at the maximum.
    @Test func retryDelayWithAHugeBackoffIsCapped() {
        var policy = RetryPolicy(limit: 2000)
        policy.delay = .maximum
        policy.backoff = 1e300
        #expect(policy.delay(beforeAttempt: 2000) == .maximum)
        #expect(policy.delay(beforeAttempt: 3) == .maximum)
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

    /// A sleep on a dispatch timer (`DispatchPool`, without a /proc) takes any duration, as
    /// `Task.sleep` does: a negative one is none, one past what nanoseconds in an `Int` hold
    /// is for ever. The conversion overflowed (a crash) for those beyond ±292 years.
    @Test(arguments: [
        (Duration.zero, 0), (.nanoseconds(-1), 0), (.milliseconds(-500), 0), (.seconds(-10_000_000_000), 0),
        (.seconds(Int64.min), 0), (.nanoseconds(1), 1), (.milliseconds(1500), 1_500_000_000),
        (.seconds(9_223_372_036) + .milliseconds(900), Int.max), (.seconds(Int64.max), Int.max), (Duration.maximum, 3_600_000_000_000_000_000),
    ])
    func aDispatchTimerTakesAnyDuration(duration: Duration, nanoseconds: Int) {
        #expect(DispatchPool.timerNanoseconds(duration) == nanoseconds)
    }
}
