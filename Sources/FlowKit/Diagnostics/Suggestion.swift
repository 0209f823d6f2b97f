/// "Did you mean" suggestions from a list of known names.
public enum Suggestion {
    /// The closest candidate to `name`, if it is close enough to be a likely typo. For a
    /// list asked many times, keep a `SuggestionIndex` instead.
    public static func closest(to name: String, in candidates: some Sequence<String>) -> String? {
        var index = SuggestionIndex(candidates)
        return index.closest(to: name)
    }

    /// The help text for an unknown name: "did you mean `x`?" or nil.
    public static func help(for name: String, in candidates: some Sequence<String>) -> String? {
        closest(to: name, in: candidates).map { "did you mean `\($0)`?" }
    }

    /// The largest edit distance at which a candidate of `length` characters is still a
    /// likely typo: 1 for short names, up to 3 for long ones.
    /// Names as a help line lists them: each in backticks, at most `limit` of them, then
    /// how many more (a workflow with hundreds of actions must not get a help line per
    /// error that long).
    public static func list(_ names: [String], limit: Int = 10) -> String {
        let shown = names.prefix(limit).map { "`\($0)`" }.joined(separator: ", ")
        return names.count > limit ? shown + " and \(names.count - limit) more" : shown
    }

    static func limit(forLength length: Int) -> Int {
        max(1, min(SuggestionIndex.widestLimit, length / 3 + 1))
    }

    /// Damerau–Levenshtein distance (optimal string alignment), so swapped letters count
    /// once. The full table: the reference the banded `SuggestionIndex.distance` is tested
    /// against.
    static func editDistance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous2 = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], previous2[j - 2] + 1)
                }
            }
            (previous2, previous, current) = (previous, current, previous2)
        }
        return previous[b.count]
    }
}
