/// "Did you mean" for a duration written as other tools and people write them.
extension Duration {
    /// The duration flow's grammar would take for `text`, when `text` is one written the
    /// way other tools or prose write durations: spaces inside (`10 s`), unit words
    /// (`1min`, `5 secs`, `2 hours`, `100msec`), upper case (`1S`), days (`7d`: flow's
    /// largest unit is the hour), units out of order (`30m1h`), a last number without its
    /// unit (`1h30`), or a number written `.5` or `5.`. Nil when `text` is none of those, or parses already.
    public static func suggestion(for text: String) -> String? {
        guard case .failure(.malformed) = parseChecked(text) else { return nil }
        // (number, unit) pairs; a unit is one of flow's, days are turned into hours.
        var parts: [(number: String, unit: String)] = []
        var rest = Substring(text.lowercased())
        func skipSpaces() { while let c = rest.first, c == " " || c == "\t" { rest.removeFirst() } }
        skipSpaces()
        while !rest.isEmpty {
            var number = String(rest.prefix { $0.isASCII && ($0.isNumber || $0 == ".") })
            rest.removeFirst(number.count)
            guard number.contains(where: \.isNumber), number.filter({ $0 == "." }).count <= 1 else { return nil }
            if number.hasPrefix(".") { number = "0" + number }
            if number.hasSuffix(".") { number.removeLast() }
            skipSpaces()
            let word = String(rest.prefix { $0.isLetter })
            rest.removeFirst(word.count)
            skipSpaces()
            // A bare number after a unit is in the next smaller one, as a clock reads
            // `1h30` or `2m30` (`1s500`: milliseconds).
            let trailing = word.isEmpty && rest.isEmpty ? parts.last.flatMap { smallerUnit[$0.unit] } : nil
            guard let unit = trailing ?? unitWords[word] else { return nil }
            if unit == "d" {
                // Whole days only: `1.5d` as hours would need arithmetic on the text.
                guard let days = Int(number), days <= Int(Duration.maximumNanoseconds / 86_400_000_000_000) else { return nil }
                parts.append((String(days * 24), "h"))
            } else {
                parts.append((number, unit))
            }
        }
        let order = ["h", "m", "s", "ms"]
        guard !parts.isEmpty, Set(parts.map(\.unit)).count == parts.count else { return nil }
        let sorted = parts.sorted { order.firstIndex(of: $0.unit)! < order.firstIndex(of: $1.unit)! }
        let suggestion = sorted.map { $0.number + $0.unit }.joined()
        guard suggestion != text, case .success = parseChecked(suggestion) else { return nil }
        return suggestion
    }

    /// The unit a bare number after `unit` is read in.
    private static let smallerUnit = ["d": "h", "h": "m", "m": "s", "s": "ms"]

    /// Unit words people write, by the unit flow spells them with (`d` for days, which
    /// `suggestion(for:)` turns into hours).
    private static let unitWords: [String: String] = {
        var words: [String: String] = [:]
        for word in ["h", "hr", "hrs", "hour", "hours"] { words[word] = "h" }
        for word in ["m", "min", "mins", "minute", "minutes"] { words[word] = "m" }
        for word in ["s", "sec", "secs", "second", "seconds"] { words[word] = "s" }
        for word in ["ms", "msec", "msecs", "millisecond", "milliseconds"] { words[word] = "ms" }
        for word in ["d", "day", "days"] { words[word] = "d" }
        return words
    }()
}
