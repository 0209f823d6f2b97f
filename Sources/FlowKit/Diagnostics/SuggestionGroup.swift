/// The candidates of a `SuggestionIndex` that have one (lowered) length: in sorted order, so
/// that neighbours share their rows of the distance table (see `EditBand`), and for long
/// names with an index of their pieces, so that a query is compared only with the few
/// candidates it could be a typo of.
///
/// The pieces: a long candidate is cut into `pieceCount` = 2 × 3 + 1 pieces. An edit
/// changes at most one piece, a swap of neighbours at most two, so a name within 3 edits
/// still has one piece intact, moved by at most 3 places (the insertions and deletions
/// before it). A query is looked up by its substrings at those places: a candidate none of
/// whose pieces is found there is not within reach, without computing anything.
struct SuggestionGroup {
    static let pieceCount = 2 * SuggestionIndex.widestLimit + 1
    /// Shorter pieces would match by chance too often to rule much out.
    static let shortestPiece = 4

    let length: Int
    /// Candidate indices in sorted order of their lowered names (rank → index).
    private(set) var members: [Int] = []
    /// How many first characters the candidate of rank `r` shares with that of rank `r + 1`.
    private var sharedWithNext: [Int] = []
    /// Ranks by the hash of a piece and its number; empty for short names.
    private var pieces: [UInt64: [Int]] = [:]
    /// One bit per rank: the candidates a query has been found to reach.
    private var found: [UInt64] = []

    var usesPieces: Bool { length >= Self.pieceCount * Self.shortestPiece }

    init(length: Int) {
        self.length = length
    }

    mutating func add(_ index: Int) {
        members.append(index)
    }

    /// Sorts the members and indexes their pieces; once, after the last `add`.
    mutating func prepare(_ candidates: [SuggestionIndex.Candidate]) {
        members.sort { candidates[$0].lowered.lexicographicallyPrecedes(candidates[$1].lowered) { $0.value < $1.value } }
        sharedWithNext = zip(members, members.dropFirst()).map { a, b in
            zip(candidates[a].lowered, candidates[b].lowered).prefix { $0 == $1 }.count
        }
        found = [UInt64](repeating: 0, count: (members.count + 63) / 64)
        guard usesPieces else { return }
        for (rank, index) in members.enumerated() {
            let name = candidates[index].lowered
            for piece in 0..<Self.pieceCount {
                let range = pieceRange(piece)
                pieces[Self.key(Self.hash(name[range]), piece: piece), default: []].append(rank)
            }
        }
    }

    /// How many first characters the candidates of ranks `a` < `b` share: the least of the
    /// neighbours' in between.
    func shared(_ a: Int, _ b: Int, budget: inout Int) -> Int {
        budget -= b - a
        return sharedWithNext[a..<b].min()!
    }

    /// The ranks, in order, of the candidates `query` may be within 3 edits of: those with a
    /// piece in the query near its place; nil for short names (all of them).
    mutating func reachable(from query: [Unicode.Scalar], budget: inout Int) -> [Int]? {
        guard usesPieces else { return nil }
        let shift = SuggestionIndex.widestLimit
        for piece in 0..<Self.pieceCount {
            let range = pieceRange(piece)
            let first = max(0, range.lowerBound - shift), last = min(query.count - range.count, range.lowerBound + shift)
            guard first <= last else { continue }
            budget -= range.count + (last - first) * 2
            // A rolling hash over the windows of the piece's length at each place.
            var hash = Self.hash(query[first..<(first + range.count)])
            var power: UInt64 = 1
            for _ in 1..<range.count { power &*= Self.base }
            var start = first
            var looked: [UInt64] = []
            while true {
                // The same window at several places (a run of one letter) is looked up once.
                let key = Self.key(hash, piece: piece)
                if !looked.contains(key), let ranks = pieces[key] {
                    looked.append(key)
                    // Names alike but for a few letters all share this piece: all are reachable.
                    if ranks.count == members.count { clearFound(); return nil }
                    budget -= ranks.count
                    for rank in ranks { found[rank / 64] |= 1 << UInt64(rank % 64) }
                }
                if start == last { break }
                hash = (hash &- UInt64(query[start].value) &* power) &* Self.base &+ UInt64(query[start + range.count].value)
                start += 1
            }
        }
        var ranks: [Int] = []
        for word in found.indices where found[word] != 0 {
            var bits = found[word]
            while bits != 0 {
                ranks.append(word * 64 + bits.trailingZeroBitCount)
                bits &= bits - 1
            }
            found[word] = 0
        }
        return ranks
    }

    private mutating func clearFound() {
        for word in found.indices { found[word] = 0 }
    }

    /// The candidate of rank `rank`.
    subscript(rank: Int) -> Int { members[rank] }

    private func pieceRange(_ piece: Int) -> Range<Int> {
        (piece * length / Self.pieceCount)..<((piece + 1) * length / Self.pieceCount)
    }

    private static let base: UInt64 = 0x100_0000_01B3

    /// A polynomial hash, the same one the rolling update continues. Collisions only let a
    /// candidate through to the exact comparison.
    private static func hash(_ scalars: ArraySlice<Unicode.Scalar>) -> UInt64 {
        scalars.reduce(0) { $0 &* base &+ UInt64($1.value) }
    }

    private static func key(_ hash: UInt64, piece: Int) -> UInt64 {
        hash ^ (UInt64(piece) &* 0x9E37_79B9_7F4A_7C15)
    }
}
