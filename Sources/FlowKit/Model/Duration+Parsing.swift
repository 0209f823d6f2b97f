extension Duration {
    /// Parses `250ms`, `1s`, `1.5s`, `2m`, `1h30m`, or a bare number of seconds.
    /// Returns nil for empty, negative or unparseable text.
    public static func parse(_ text: String) -> Duration? {
        let scalars = Array(text.trimmingSpaces.unicodeScalars)
        guard !scalars.isEmpty else { return nil }
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

extension String {
    /// The string without leading and trailing spaces and tabs.
    var trimmingSpaces: Substring {
        var s = self[...]
        while let first = s.first, first == " " || first == "\t" { s.removeFirst() }
        while let last = s.last, last == " " || last == "\t" { s.removeLast() }
        return s
    }
}
