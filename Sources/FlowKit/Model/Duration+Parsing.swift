extension Duration {
    /// The longest duration a workflow or an option may give: 1,000,000 hours (about 114
    /// years). Far beyond any real wait, yet its nanoseconds fit an `Int64` with room for a
    /// sum of two, so sleeping, deadlines and plan totals never overflow.
    public static let maximum = Duration.seconds(maximumNanoseconds / 1_000_000_000)

    /// `maximum` in nanoseconds.
    static let maximumNanoseconds: Int64 = 3_600_000_000_000_000_000

    /// `maximum` as written in messages and docs.
    public static let maximumText = "1000000h"

    /// Why a text is not a duration.
    public enum ParseFailure: Error, Sendable, Equatable {
        /// Empty, or only spaces and tabs.
        case empty
        /// Starts with `-`.
        case negative
        /// Not of the grammar.
        case malformed
        /// Of the grammar, but longer than `Duration.maximum`.
        case tooLong
    }

    /// Parses `250ms`, `1s`, `1.5s`, `2m`, `1h30m`, or a bare number of seconds.
    /// Returns nil for empty, negative, unparseable or too long text.
    public static func parse(_ text: String) -> Duration? {
        try? parseChecked(text).get()
    }

    /// Parses exactly the documented grammar (surrounding spaces and tabs aside):
    ///
    ///     duration = number | [number "h"] [number "m"] [number "s"] [number "ms"]   (at least one)
    ///     number   = digit {digit} ["." digit {digit}]
    ///
    /// A bare number is seconds. Nothing else: no sign, exponent, hex, `.5` or `5.`, which
    /// `Double(_:)` would take. The value is kept in whole nanoseconds (finer fractions
    /// round to the nearest one), so `1m30.5s` stays exactly that.
    public static func parseChecked(_ text: String) -> Result<Duration, ParseFailure> {
        let trimmed = text.trimmingSpaces
        if trimmed.isEmpty { return .failure(.empty) }
        var bytes = trimmed.utf8.makeIterator()
        var next = bytes.next()
        if next == UInt8(ascii: "-") { return .failure(.negative) }
        var total: Int64 = 0
        var tooLong = false
        var lastRank = Int.max
        func isDigit(_ b: UInt8?) -> Bool { b.map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? false }
        while next != nil {
            // The number: whole part in an Int64 (saturating: only "too long" matters once it
            // is that big), fraction digits kept as text for an exact conversion.
            guard isDigit(next) else { return .failure(.malformed) }
            var whole: Int64 = 0
            while let b = next, isDigit(b) {
                whole = whole > (Int64.max - 9) / 10 ? Int64.max : whole * 10 + Int64(b - UInt8(ascii: "0"))
                next = bytes.next()
            }
            var fraction: [UInt8] = []
            if next == UInt8(ascii: ".") {
                next = bytes.next()
                guard isDigit(next) else { return .failure(.malformed) }
                while let b = next, isDigit(b) {
                    fraction.append(b)
                    next = bytes.next()
                }
            }
            // The unit's letters packed into an integer (no allocation per step of a big file).
            var unit: UInt32 = 0
            var unitLength = 0
            while let b = next, b >= UInt8(ascii: "a"), b <= UInt8(ascii: "z"), unitLength < 3 {
                unit = unit << 8 | UInt32(b)
                unitLength += 1
                next = bytes.next()
            }
            let (unitNanoseconds, rank): (Int64, Int)
            switch unit {
            case UInt32(UInt8(ascii: "h")): (unitNanoseconds, rank) = (3_600_000_000_000, 4)
            case UInt32(UInt8(ascii: "m")): (unitNanoseconds, rank) = (60_000_000_000, 3)
            case UInt32(UInt8(ascii: "s")): (unitNanoseconds, rank) = (1_000_000_000, 2)
            case UInt32(UInt8(ascii: "m")) << 8 | UInt32(UInt8(ascii: "s")): (unitNanoseconds, rank) = (1_000_000, 1)
            // A bare number is seconds, and only on its own (`5` but not `1m5`).
            case 0 where lastRank == Int.max && next == nil: (unitNanoseconds, rank) = (1_000_000_000, 2)
            default: return .failure(.malformed)
            }
            // Units go from larger to smaller, each once (`1h30m`, not `30m1h`).
            guard rank < lastRank else { return .failure(.malformed) }
            lastRank = rank
            guard !tooLong, whole <= maximumNanoseconds / unitNanoseconds else {
                tooLong = true
                continue
            }
            var part = whole * unitNanoseconds
            if !fraction.isEmpty {
                // Below one unit (< 3.6e12 ns), so a Double holds it to far better than a
                // nanosecond; rounding then gives the exact count.
                let value = Double("0." + String(decoding: fraction, as: UTF8.self)) ?? 0
                part += Int64((value * Double(unitNanoseconds)).rounded())
            }
            if part > maximumNanoseconds - total { tooLong = true } else { total += part }
        }
        return tooLong ? .failure(.tooLong) : .success(.nanoseconds(total))
    }

    /// The duration in whole nanoseconds, to the nearest (flow's durations are whole
    /// nanoseconds): exact, unlike `seconds`, for every duration from zero to `maximum`
    /// (3.6e18 fits an `Int64`).
    public var wholeNanoseconds: Int64 {
        let (s, attoseconds) = components
        return s * 1_000_000_000 + (attoseconds + 500_000_000) / 1_000_000_000
    }

    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }

    /// The sum, or `maximum` if it would be longer (plan totals of many long delays).
    public func saturatingAdd(_ other: Duration) -> Duration {
        let a = min(self, .maximum), b = min(other, .maximum)
        return a > .maximum - b ? .maximum : a + b
    }

    /// The duration `count` times over, or `maximum` if that would be longer (a plan's
    /// count of a million retries).
    public func saturatingMultiplied(by count: Int) -> Duration {
        guard count > 0, self > .zero else { return .zero }
        let (product, overflow) = min(self, .maximum).wholeNanoseconds.multipliedReportingOverflow(by: Int64(count))
        return overflow || product >= Duration.maximum.wholeNanoseconds ? .maximum : .nanoseconds(product)
    }

    /// The exact compact form for plans and summaries: `250ms`, `1.5ms`, `1.5s`, `2m`,
    /// `1h30m`, `1m30.5s`. It parses back to the same duration: nothing is rounded but
    /// what lies below a nanosecond.
    public var compact: String {
        if self < .zero { return "-" + (Duration.zero - self).compact }
        var (wholeSeconds, attoseconds) = components
        var nanoseconds = (attoseconds + 500_000_000) / 1_000_000_000
        if nanoseconds == 1_000_000_000 { wholeSeconds += 1; nanoseconds = 0 }
        if wholeSeconds == 0 {
            if nanoseconds == 0 { return "0s" }
            // Below a second: milliseconds, with the rest as a fraction (`1.5ms`).
            return Self.decimal(Int64(nanoseconds / 1_000_000), fraction: Int64(nanoseconds % 1_000_000), digits: 6) + "ms"
        }
        var out = ""
        var rest = wholeSeconds
        if rest >= 60 {
            if rest >= 3600 { out += "\(rest / 3600)h"; rest %= 3600 }
            if rest >= 60 { out += "\(rest / 60)m"; rest %= 60 }
            if rest == 0 && nanoseconds == 0 { return out }
        }
        return out + Self.decimal(rest, fraction: Int64(nanoseconds), digits: 9) + "s"
    }

    /// `whole.fraction` with `fraction` written in `digits` places, trailing zeros dropped.
    private static func decimal(_ whole: Int64, fraction: Int64, digits: Int) -> String {
        guard fraction > 0 else { return "\(whole)" }
        var text = String(fraction)
        text = String(repeating: "0", count: digits - text.count) + text
        while text.hasSuffix("0") { text.removeLast() }
        return "\(whole).\(text)"
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs (byte-wise: this runs for
    /// every duration and expression of a 100,000-step file, and a space or a tab byte is
    /// never part of a longer UTF-8 sequence, so the ends stay on character boundaries).
    var trimmingSpaces: Substring {
        let bytes = utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == UInt8(ascii: " ") || bytes[start] == UInt8(ascii: "\t") {
            start = bytes.index(after: start)
        }
        // One pass forward (a StringProtocol's UTF-8 view only goes forward): the end is
        // just after the last byte that is neither a space nor a tab.
        if start < end {
            var index = start
            var last = start
            while index < end {
                let byte = bytes[index]
                index = bytes.index(after: index)
                if byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t") { last = index }
            }
            end = last
        }
        return Substring(self)[start..<end]
    }

    /// Whether the text is empty or only spaces and tabs (what `trimmingSpaces` would make
    /// empty), found at the first other byte: asked of every shell command.
    var isBlank: Bool {
        utf8.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }

    /// Whether the text contains `${{` (a fast byte scan; most strings have none).
    var hasExpressionMarker: Bool {
        if let found = utf8.withContiguousStorageIfAvailable({ buffer -> Bool in
            var i = 0
            let n = buffer.count
            while i + 2 < n {
                if buffer[i] == UInt8(ascii: "$"), buffer[i + 1] == UInt8(ascii: "{"), buffer[i + 2] == UInt8(ascii: "{") { return true }
                i += 1
            }
            return false
        }) {
            return found
        }
        var state = 0
        for byte in utf8 {
            switch (state, byte) {
            case (_, UInt8(ascii: "$")): state = 1
            case (1, UInt8(ascii: "{")): state = 2
            case (2, UInt8(ascii: "{")): return true
            default: state = 0
            }
        }
        return false
    }
}
