extension Duration {
    /// Parses `250ms`, `1s`, `1.5s`, `2m`, `1h30m`, or a bare number of seconds.
    /// Returns nil for empty, negative or unparseable text.
    public static func parse(_ text: String) -> Duration? {
        if let quick = parseSimple(text) { return quick }
        let trimmed = text.trimmingSpaces
        guard !trimmed.isEmpty else { return nil }
        // Fast path: a bare number of seconds.
        if let first = trimmed.utf8.first, first != UInt8(ascii: "-"), let seconds = Double(trimmed) {
            guard seconds >= 0, seconds.isFinite else { return nil }
            return .seconds(seconds)
        }
        let scalars = Array(trimmed.unicodeScalars)
        if let seconds = Double(String(String.UnicodeScalarView(scalars))) {
            guard seconds >= 0, seconds.isFinite else { return nil }
            return .seconds(seconds)
        }
        var total = 0.0
        var i = 0
        var lastUnitRank = Int.max
        while i < scalars.count {
            let numberStart = i
            while i < scalars.count, (scalars[i] >= "0" && scalars[i] <= "9") || scalars[i] == "." { i += 1 }
            guard i > numberStart, let number = Double(String(String.UnicodeScalarView(scalars[numberStart..<i]))) else { return nil }
            let unitStart = i
            while i < scalars.count, scalars[i].properties.isAlphabetic { i += 1 }
            let unit = String(String.UnicodeScalarView(scalars[unitStart..<i]))
            let (factor, rank): (Double, Int)
            switch unit {
            case "h": (factor, rank) = (3600, 4)
            case "m": (factor, rank) = (60, 3)
            case "s": (factor, rank) = (1, 2)
            case "ms": (factor, rank) = (0.001, 1)
            default: return nil
            }
            // Units must go from larger to smaller, each once (`1h30m`, not `30m1h`).
            guard rank < lastUnitRank else { return nil }
            lastUnitRank = rank
            total += number * factor
        }
        return .seconds(total)
    }

    /// The common shapes (`1`, `30s`, `250ms`, `2m`, `1h`: whole numbers, one unit) without
    /// building strings; anything else goes the general way.
    static func parseSimple(_ text: String) -> Duration? {
        var value: Int64 = 0
        var digits = 0
        var unit: (UInt8, UInt8) = (0, 0)
        var unitLength = 0
        for byte in text.utf8 {
            if unitLength == 0, byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") {
                guard digits < 12 else { return nil }
                value = value * 10 + Int64(byte - UInt8(ascii: "0"))
                digits += 1
            } else if digits > 0, unitLength < 2, byte >= UInt8(ascii: "a"), byte <= UInt8(ascii: "z") {
                if unitLength == 0 { unit.0 = byte } else { unit.1 = byte }
                unitLength += 1
            } else {
                return nil
            }
        }
        guard digits > 0 else { return nil }
        switch (unitLength, unit.0, unit.1) {
        case (0, _, _), (1, UInt8(ascii: "s"), _): return .seconds(value)
        case (1, UInt8(ascii: "m"), _): return .seconds(value * 60)
        case (1, UInt8(ascii: "h"), _): return .seconds(value * 3600)
        case (2, UInt8(ascii: "m"), UInt8(ascii: "s")): return .milliseconds(value)
        default: return nil
        }
    }

    /// The duration in seconds, as a Double.
    public var seconds: Double {
        let (s, attoseconds) = components
        return Double(s) + Double(attoseconds) / 1e18
    }

    /// A compact form for plans and summaries: `250ms`, `1.5s`, `2m`, `1h30m`.
    public var compact: String {
        let total = seconds
        if total == 0 { return "0s" }
        if total < 1 { return "\(Int((total * 1000).rounded()))ms" }
        if total < 60 {
            let rounded = (total * 1000).rounded() / 1000
            return rounded == rounded.rounded() ? "\(Int(rounded))s" : "\(trimmed(rounded))s"
        }
        var rest = Int(total.rounded())
        var out = ""
        if rest >= 3600 { out += "\(rest / 3600)h"; rest %= 3600 }
        if rest >= 60 { out += "\(rest / 60)m"; rest %= 60 }
        if rest > 0 { out += "\(rest)s" }
        return out
    }

    private func trimmed(_ value: Double) -> String {
        var text = String(value)
        while text.contains("."), text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
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
