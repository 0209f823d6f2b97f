/// "Did you mean" over one fixed list of candidates that is asked many times: the steps or
/// variables of a workflow, for every unresolved reference in it.
///
/// `Suggestion.closest` compares a name with every candidate in full, which made a file with
/// 20,000 unknown `steps.…` references take minutes (20,000 × 20,000 edit distances). This
/// gives the same answer — the closest candidate within its typo limit, the first one in
/// list order on a tie — much more cheaply:
/// - candidates are lowered once and grouped by length, and only lengths that could be
///   within the limit (at most 3 edits) are looked at, nearest first;
/// - a 64-bit set of the characters each name uses rules most candidates out at once: one
///   edit changes at most two members of that set;
/// - the edit distance is computed in a band around the diagonal and stops as soon as it
///   must exceed the best distance found so far;
/// - answers are cached per name;
/// - the total work is bounded (`budget`: one unit per candidate looked at and per table
///   cell computed): once it is spent, further names get no suggestion. A workflow with thousands of typos gets suggestions for the first
///   ones and still validates at once; an ordinary one never comes near the bound.
public struct SuggestionIndex {
    /// One candidate, prepared once.
    struct Candidate {
        var name: String
        var lowered: [Unicode.Scalar]
        var characters: UInt64
        /// The largest distance still taken for a typo of this candidate.
        var limit: Int
    }

    /// The characters of `scalars` as a set of 64 bits (a character's bit is its code modulo 64).
    static func characterSet(_ scalars: [Unicode.Scalar]) -> UInt64 {
        scalars.reduce(0) { $0 | 1 << UInt64($1.value % 64) }
    }

    /// The largest limit any candidate has (see `Suggestion.limit(forLength:)`).
    static let widestLimit = 3
    /// Enough for a few thousand look-ups in a list of thousands of names.
    public static let defaultBudget = 20_000_000

    private var candidates: [Candidate] = []
    /// Candidate indices (in list order) by lowered length.
    private var byLength: [Int: [Int]] = [:]
    private var cache: [String: String?] = [:]
    /// Table cells left to compute.
    public private(set) var budget: Int
    // Rows of the distance table, kept between calls so a comparison allocates nothing.
    private var previous2: [Int] = []
    private var previous: [Int] = []
    private var current: [Int] = []

    public init(_ names: some Sequence<String>, budget: Int = defaultBudget) {
        self.budget = budget
        for name in names {
            let lowered = Array(name.lowercased().unicodeScalars)
            byLength[lowered.count, default: []].append(candidates.count)
            candidates.append(Candidate(name: name, lowered: lowered, characters: Self.characterSet(lowered),
                                        limit: Suggestion.limit(forLength: name.unicodeScalars.count)))
        }
    }

    /// The help text for an unknown name: "did you mean `x`?" or nil.
    public mutating func help(for name: String) -> String? {
        closest(to: name).map { "did you mean `\($0)`?" }
    }

    /// The closest candidate to `name`, if it is close enough to be a likely typo.
    public mutating func closest(to name: String) -> String? {
        if let known = cache[name] { return known }
        let query = Array(name.lowercased().unicodeScalars)
        let characters = Self.characterSet(query)
        var best: (distance: Int, index: Int)?
        // Lengths nearest the query's first: a close match found early narrows the rest.
        lengths: for gap in 0...Self.widestLimit {
            for length in gap == 0 ? [query.count] : [query.count - gap, query.count + gap] {
                guard let list = byLength[length] else { continue }
                for index in list {
                    let candidate = candidates[index]
                    // Better than the best so far: nearer, or as near and earlier in the list.
                    var bound = candidate.limit
                    if let best { bound = min(bound, index < best.index ? best.distance : best.distance - 1) }
                    guard gap <= bound else { continue }
                    guard budget > 0 else { break lengths }
                    budget -= 1
                    // A substitution changes at most two members of the character set, an
                    // insertion or deletion one, a swap none: so this many edits at least.
                    guard ((candidate.characters ^ characters).nonzeroBitCount + 1) / 2 <= bound else { continue }
                    if let distance = distance(query, candidate.lowered, within: bound) {
                        best = (distance, index)
                    }
                }
            }
        }
        let answer = best.map { candidates[$0.index].name }
        cache[name] = .some(answer)
        return answer
    }

    /// The Damerau–Levenshtein distance (optimal string alignment) of `a` and `b` if it is at
    /// most `bound`, else nil. Only cells within `bound` of the diagonal can stay within
    /// it, so only those are computed; a row whose every cell exceeds `bound` ends the search.
    mutating func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], within bound: Int) -> Int? {
        // The lengths alone set a lower bound (and the corner cell must lie in the band).
        guard abs(a.count - b.count) <= bound else { return nil }
        if a.isEmpty || b.isEmpty { return max(a.count, b.count) }
        let outside = bound + 1
        let width = b.count + 1
        if previous.count < width {
            previous2 = [Int](repeating: 0, count: width)
            previous = previous2
            current = previous2
        }
        for j in 0..<width { previous[j] = min(j, outside) }
        for i in 1...a.count {
            let low = max(1, i - bound), high = min(b.count, i + bound)
            // Cells left of the band (and column 0 beyond the bound) count as too far.
            current[0] = min(i, outside)
            if low > 1 { current[low - 1] = outside }
            var rowMinimum = current[0]
            if low <= high {
                budget -= high - low + 1
                for j in low...high {
                    let cost = a[i - 1] == b[j - 1] ? 0 : 1
                    var value = min(previous[j - 1] + cost, outside)
                    // Above the band the previous row holds no value for this column.
                    if j <= i - 1 + bound { value = min(value, previous[j] + 1) }
                    if j > low || low == 1 { value = min(value, current[j - 1] + 1) }
                    if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                        value = min(value, previous2[j - 2] + 1)
                    }
                    current[j] = value
                    rowMinimum = min(rowMinimum, value)
                }
            }
            if high < b.count { current[high + 1] = outside }
            if rowMinimum > bound { return nil }
            (previous2, previous, current) = (previous, current, previous2)
        }
        let result = previous[b.count]
        return result <= bound ? result : nil
    }
}
