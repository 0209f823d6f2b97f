/// "Did you mean" over one fixed list of candidates that is asked many times: the steps or
/// variables of a workflow, for every unresolved reference in it.
///
/// `Suggestion.closest` compares a name with every candidate in full, which made a file with
/// 20,000 unknown `steps.…` references take minutes (20,000 × 20,000 edit distances). This
/// gives the same answer — the closest candidate within its typo limit, the first one in
/// list order on a tie — much more cheaply:
/// - candidates are lowered once and grouped by length, and only lengths that could be
///   within the limit (at most 3 edits) are looked at, nearest first;
/// - in a group of long names, an index of their pieces leaves only the candidates that
///   still have one piece of theirs in the query, near its place (see `SuggestionGroup`):
///   long names are rarely typos of one another;
/// - a 64-bit set of the characters each name uses rules most short candidates out at
///   once: one edit changes at most two members of that set;
/// - the edit distance is computed in a band around the diagonal, after the prefix and the
///   suffix the two names have in common (those change nothing), and stops as soon as it
///   must exceed the best distance found so far; candidates are taken in sorted order and
///   reuse the rows of the one before up to their common prefix (see `EditBand`), so a
///   thousand names that differ only in their last characters cost little more than one;
/// - answers are cached per name;
/// - the total work is bounded (`budget`: one unit per candidate looked at, per table
///   cell computed, per character hashed or compared): once it is spent, further names get
///   no suggestion. A workflow with thousands of typos gets suggestions for the first
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
    private var groups: [SuggestionGroup] = []
    /// Group positions by lowered length.
    private var groupOf: [Int: Int] = [:]
    private var cache: [String: String?] = [:]
    /// Work left (see the type's summary).
    public private(set) var budget: Int
    /// The distance table, kept between calls so a comparison allocates nothing.
    private var band = EditBand()

    public init(_ names: some Sequence<String>, budget: Int = defaultBudget) {
        self.budget = budget
        for name in names {
            let lowered = Array(name.lowercased().unicodeScalars)
            if groupOf[lowered.count] == nil {
                groupOf[lowered.count] = groups.count
                groups.append(SuggestionGroup(length: lowered.count))
            }
            groups[groupOf[lowered.count]!].add(candidates.count)
            candidates.append(Candidate(name: name, lowered: lowered, characters: Self.characterSet(lowered),
                                        limit: Suggestion.limit(forLength: name.unicodeScalars.count)))
        }
        for g in groups.indices { groups[g].prepare(candidates) }
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
        band.reset(query: query)
        var best: (distance: Int, index: Int)?
        // Lengths nearest the query's first: a close match found early narrows the rest.
        lengths: for gap in 0...Self.widestLimit {
            for length in gap == 0 ? [query.count] : [query.count - gap, query.count + gap] {
                guard let g = groupOf[length] else { continue }
                guard budget > 0 else { break lengths }
                let reachable = groups[g].reachable(from: query, budget: &budget)
                // The last candidate compared: the band holds its rows.
                var previous: (rank: Int, queryPrefix: Int)?
                band.forget()
                for position in 0..<(reachable?.count ?? groups[g].members.count) {
                    let rank = reachable?[position] ?? position
                    let index = groups[g][rank]
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
                    let shared = previous.map { groups[g].shared($0.rank, rank, budget: &budget) } ?? 0
                    let queryPrefix = Self.queryPrefix(candidate.lowered, query, after: previous, shared: shared,
                                                       budget: &budget)
                    let end = Self.end(candidate.lowered, query, queryPrefix: queryPrefix, budget: &budget)
                    let distance = band.distance(to: candidate.lowered, shared: previous == nil ? 0 : shared,
                                                 queryPrefix: queryPrefix, end: end, bound: bound, budget: &budget)
                    previous = (rank, queryPrefix)
                    if let distance { best = (distance, index) }
                }
            }
        }
        let answer = best.map { candidates[$0.index].name }
        cache[name] = .some(answer)
        return answer
    }

    /// How many first characters `candidate` has in common with `query`, from what is known
    /// of the previous candidate: it shares `shared` with that one, which had `after.queryPrefix`
    /// in common with the query, so only a tie needs comparing further.
    static func queryPrefix(_ candidate: [Unicode.Scalar], _ query: [Unicode.Scalar],
                            after previous: (rank: Int, queryPrefix: Int)?, shared: Int, budget: inout Int) -> Int {
        var prefix = 0
        if let previous {
            if shared != previous.queryPrefix { return min(shared, previous.queryPrefix) }
            prefix = shared
        }
        let limit = min(candidate.count, query.count)
        let start = prefix
        while prefix < limit, candidate[prefix] == query[prefix] { prefix += 1 }
        budget -= prefix - start
        return prefix
    }

    /// The row of `candidate` whose cell is its distance to `query`: its length less the
    /// suffix the two have in common past their common prefix.
    static func end(_ candidate: [Unicode.Scalar], _ query: [Unicode.Scalar], queryPrefix: Int,
                    budget: inout Int) -> Int {
        var a = candidate.count, b = query.count
        while a > queryPrefix, b > queryPrefix, candidate[a - 1] == query[b - 1] { a -= 1; b -= 1 }
        budget -= candidate.count - a
        return a
    }

    /// The Damerau–Levenshtein distance (optimal string alignment) of `a` and `b` if it is at
    /// most `bound` (≤ 3), else nil: what `closest` computes for one pair.
    mutating func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar], within bound: Int) -> Int? {
        band.reset(query: a)
        let prefix = Self.queryPrefix(b, a, after: nil, shared: 0, budget: &budget)
        let end = Self.end(b, a, queryPrefix: prefix, budget: &budget)
        return band.distance(to: b, shared: 0, queryPrefix: prefix, end: end, bound: bound, budget: &budget)
    }
}
