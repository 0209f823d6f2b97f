/// The banded Damerau–Levenshtein (optimal string alignment) table of one query against a
/// run of candidates, kept between candidates so that those sharing a prefix share its rows.
///
/// Row `i` is the candidate's first `i` characters against every prefix of the query, and
/// depends on nothing else: taken in sorted order, a candidate reuses the rows of the one
/// before up to their common prefix, as a walk over a trie of the names would, without the
/// trie. Only cells within `width` of the diagonal are kept (farther ones are more than
/// `width` edits anyway), so a row is `2 × width + 1` cells whatever the names' length.
/// Values are exact up to `width` and capped at `width + 1`, so the same rows serve every
/// bound up to `width`.
struct EditBand {
    static let width = SuggestionIndex.widestLimit
    static let stride = 2 * width + 1
    static let outside = Int32(width + 1)

    /// The query, lowered, as the columns.
    private(set) var query: [Unicode.Scalar] = []
    /// Row `i` at `i * stride`; its slot `k` is column `i - width + k`.
    private var cells: [Int32] = []
    /// The rows `storedFrom...storedTo` hold those of the last candidate; none when
    /// `storedTo < storedFrom`.
    private var storedFrom = 0
    private var storedTo = -1

    /// Starts over with another query: no row is kept.
    mutating func reset(query: [Unicode.Scalar]) {
        self.query = query
        forget()
    }

    /// Drops the kept rows (the next candidate shares nothing with a previous one).
    mutating func forget() {
        storedFrom = 0
        storedTo = -1
    }

    /// The distance of `candidate` to the query if it is at most `bound` (≤ `width`), else nil.
    /// - `shared`: how many first characters `candidate` has in common with the previous
    ///   candidate given to this band (its rows up to there are reused).
    /// - `queryPrefix`: how many first characters it has in common with the query (those
    ///   rows are known without computing them: cell (i, j) is |i − j|).
    /// - `end`: the row whose cell is the answer: the candidate's length less the suffix it
    ///   has in common with the query beyond `queryPrefix` (a common suffix changes nothing).
    /// - `budget` loses one unit per cell computed.
    mutating func distance(to candidate: [Unicode.Scalar], shared: Int, queryPrefix: Int, end: Int,
                           bound: Int, budget: inout Int) -> Int? {
        let m = candidate.count, n = query.count
        guard abs(m - n) <= bound, bound <= Self.width else { forget(); return nil }
        // The cell (end, column) is the answer; the lengths put it within the band.
        let column = n - (m - end)
        if end <= queryPrefix {
            // All of what is left is a common prefix: only the lengths differ.
            forget()
            return abs(m - n)
        }
        let rowsNeeded = (m + 1) * Self.stride
        if cells.count < rowsNeeded { cells += [Int32](repeating: Self.outside, count: rowsNeeded - cells.count) }

        var top: Int
        // Reuse the previous candidate's rows if they reach further than the common prefix
        // with the query, and row `top - 1` is there for the swaps of row `top + 1`.
        let reusable = min(shared, storedTo)
        if reusable > queryPrefix, reusable - 1 >= storedFrom {
            top = reusable
        } else {
            top = queryPrefix
            storedFrom = max(0, top - 1)
            writeKnownRow(storedFrom)
            writeKnownRow(top)
        }
        storedTo = top
        if rowMinimum(top) > bound { return nil }

        let stride = Self.stride, width = Self.width, outside = Self.outside
        var result: Int?
        var localBudget = budget
        var reached = top
        // Work on a local copy of the table (moved out, so not copied): the loop then
        // touches no property of `self`, and runs without exclusivity or bounds checks.
        var table = cells
        cells = []
        let query = self.query
        table.withUnsafeMutableBufferPointer { cells in
            query.withUnsafeBufferPointer { q in
                candidate.withUnsafeBufferPointer { c in
                    var i = top + 1
                    while i <= end {
                        let row = i * stride, previous = row - stride, previous2 = previous - stride
                        var minimum = outside
                        for k in 0..<stride {
                            let j = i - width + k
                            var value: Int32
                            if j < 0 || j > n {
                                value = outside
                            } else if j == 0 {
                                value = min(Int32(i), outside)
                            } else {
                                value = cells[previous + k] + (c[i - 1] == q[j - 1] ? 0 : 1)
                                if k + 1 < stride { value = min(value, cells[previous + k + 1] + 1) }
                                if k > 0 { value = min(value, cells[row + k - 1] + 1) }
                                if i > 1, j > 1, c[i - 1] == q[j - 2], c[i - 2] == q[j - 1] {
                                    value = min(value, cells[previous2 + k] + 1)
                                }
                                value = min(value, outside)
                            }
                            cells[row + k] = value
                            minimum = min(minimum, value)
                        }
                        localBudget -= stride
                        reached = i
                        // Every path to the corner crosses this row (a swap crosses the one
                        // before at no less cost), so the distance is past the bound.
                        if minimum > bound { return }
                        i += 1
                    }
                    let value = Int(cells[end * stride + column - end + width])
                    if value <= bound { result = value }
                }
            }
        }
        cells = table
        storedTo = reached
        budget = localBudget
        return result
    }

    /// Writes row `i` of a candidate whose first `i` characters are the query's: |i − j|.
    private mutating func writeKnownRow(_ i: Int) {
        let n = query.count
        for k in 0..<Self.stride {
            let j = i - Self.width + k
            cells[i * Self.stride + k] = j < 0 || j > n ? Self.outside : min(Int32(abs(i - j)), Self.outside)
        }
    }

    private func rowMinimum(_ i: Int) -> Int {
        Int(cells[(i * Self.stride)..<((i + 1) * Self.stride)].min()!)
    }
}
