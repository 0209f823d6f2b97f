@testable import FlowKit
import Testing

/// "Did you mean" suggestions.
@Suite struct SuggestionTests {
    @Test(arguments: [
        ("shel", "shell"), ("pirnt", "print"), ("sequental", "sequential"), ("concurent", "concurrent"), ("Print", "print"),
        ("delya", "delay"), ("stpes", "steps"), ("finaly", "finally"), ("timout", "timeout"),
    ])
    func closeNamesAreSuggested(typo: String, expected: String) {
        let candidates = StepKind.keywords + StepKind.commonOptions + WorkflowParser.topLevelKeys
        #expect(Suggestion.closest(to: typo, in: candidates) == expected)
    }

    @Test(arguments: ["xyz", "banana", "", "completely-different"])
    func farNamesAreNotSuggested(name: String) {
        #expect(Suggestion.closest(to: name, in: StepKind.keywords) == nil)
    }

    /// Another runner's key names a real flow key, and is not a flow key itself (which
    /// would never reach the table).
    @Test func foreignKeysNameFlowKeys() {
        let stepKeys = Set(StepKind.keywords + StepKind.commonOptions + StepKind.groupOptions + StepKind.kindOptions.values.flatMap { $0 })
        for (foreign, flow) in ForeignKey.stepKeys {
            #expect(stepKeys.contains(flow), "`\(foreign)` → `\(flow)`, which is no step key")
            #expect(!stepKeys.contains(foreign), "`\(foreign)` is a step key of flow's own")
        }
        for (foreign, flow) in ForeignKey.workflowKeys {
            #expect(WorkflowParser.topLevelKeys.contains(flow), "`\(foreign)` → `\(flow)`, which is no top-level key")
            #expect(!WorkflowParser.topLevelKeys.contains(foreign))
        }
        #expect(ForeignKey.isKind("run") && !ForeignKey.isKind("cwd"))
    }

    /// Help lines list at most ten names, then say how many more there are.
    @Test func listsAreCapped() {
        #expect(Suggestion.list(["a", "b"]) == "`a`, `b`")
        let many = (1...25).map { "n\($0)" }
        #expect(Suggestion.list(many) == (1...10).map { "`n\($0)`" }.joined(separator: ", ") + " and 15 more")
    }

    @Test func closestWins() {
        #expect(Suggestion.closest(to: "stat", in: ["start", "state", "stat2"]) != nil)
        #expect(Suggestion.closest(to: "abcd", in: ["abxy", "abcx"]) == "abcx")
        #expect(Suggestion.closest(to: "x", in: []) == nil)
    }

    @Test func shortNamesAllowOneEdit() {
        #expect(Suggestion.closest(to: "fi", in: ["if"]) == "if", "a swap counts as one edit")
        #expect(Suggestion.closest(to: "of", in: ["if"]) == "if")
        #expect(Suggestion.closest(to: "ab", in: ["if"]) == nil)
    }

    @Test func editDistance() {
        func d(_ a: String, _ b: String) -> Int {
            Suggestion.editDistance(Array(a.unicodeScalars), Array(b.unicodeScalars))
        }
        #expect(d("", "abc") == 3)
        #expect(d("abc", "") == 3)
        #expect(d("kitten", "sitting") == 3)
        #expect(d("ab", "ba") == 1)
        #expect(d("same", "same") == 0)
        #expect(d("héllo", "hello") == 1)
    }

    @Test func helpText() {
        #expect(Suggestion.help(for: "shel", in: ["shell"]) == "did you mean `shell`?")
        #expect(Suggestion.help(for: "zzz", in: ["shell"]) == nil)
    }

    // MARK: SuggestionIndex

    /// The old full search, kept here as the reference the index must agree with: every
    /// candidate, full table, the first of the nearest within its limit.
    static func reference(_ name: String, _ candidates: [String]) -> String? {
        let lowered = Array(name.lowercased().unicodeScalars)
        var best: (String, Int)?
        for candidate in candidates {
            let distance = Suggestion.editDistance(lowered, Array(candidate.lowercased().unicodeScalars))
            let limit = max(1, min(3, candidate.unicodeScalars.count / 3 + 1))
            if distance <= limit, best == nil || distance < best!.1 { best = (candidate, distance) }
        }
        return best?.0
    }

    /// A deterministic stream of short names over a small alphabet, so that many are close.
    struct Names: IteratorProtocol {
        var state: UInt64
        mutating func next() -> String? {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            let length = Int(state >> 60) % 9 + 1
            var out = ""
            for k in 0..<length {
                let letters = Array("abcdeAB-1é".unicodeScalars)
                out.unicodeScalars.append(letters[Int((state >> (UInt64(k) * 5 + 3)) & 0xff) % letters.count])
            }
            return out
        }
    }

    /// The banded, bounded, cached search gives exactly the full search's answer.
    @Test(arguments: [1, 2, 3, 4])
    func indexAgreesWithTheFullSearch(seed: UInt64) {
        var names = Names(state: seed)
        let candidates = (0..<300).map { _ in names.next()! }
        var index = SuggestionIndex(candidates)
        for _ in 0..<400 {
            let name = names.next()!
            #expect(index.closest(to: name) == Self.reference(name, candidates), "`\(name)`")
        }
        // Asked again: the cached answers are the same.
        var again = Names(state: seed)
        for _ in 0..<300 { _ = again.next() }
        for _ in 0..<50 {
            let name = again.next()!
            #expect(index.closest(to: name) == Self.reference(name, candidates))
        }
    }

    /// A deterministic generator of long names and their typos.
    struct LongNames {
        var state: UInt64
        mutating func number(_ below: Int) -> Int {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            return Int(state >> 33) % below
        }
        mutating func name(_ length: Int, alphabet: String) -> String {
            let letters = Array(alphabet.unicodeScalars)
            var out = String.UnicodeScalarView()
            for _ in 0..<length { out.append(letters[number(letters.count)]) }
            return String(out)
        }
        /// `name` with `edits` random substitutions, insertions, deletions or swaps.
        mutating func typo(of name: String, edits: Int) -> String {
            var scalars = Array(name.unicodeScalars)
            let letters = Array("abcXé".unicodeScalars)
            for _ in 0..<edits where scalars.count > 2 {
                let at = number(scalars.count - 1)
                switch number(4) {
                case 0: scalars[at] = letters[number(letters.count)]
                case 1: scalars.insert(letters[number(letters.count)], at: at)
                case 2: scalars.remove(at: at)
                default: scalars.swapAt(at, at + 1)
                }
            }
            return String(String.UnicodeScalarView(scalars))
        }
    }

    /// Long names go through the piece index, the sorted row reuse and the common prefix and
    /// suffix: the answers are still the full search's, for names that are near one another
    /// (a small alphabet, one long common prefix, one long common suffix) and typos of up to
    /// four edits.
    @Test(arguments: [11, 12, 13])
    func longNamesAgreeWithTheFullSearch(seed: UInt64) {
        var names = LongNames(state: seed)
        var candidates: [String] = []
        let prefix = names.name(40, alphabet: "ab"), suffix = names.name(35, alphabet: "ab")
        for _ in 0..<25 { candidates.append(names.name(28 + names.number(20), alphabet: "abc")) }
        for _ in 0..<25 { candidates.append(prefix + names.name(1 + names.number(4), alphabet: "abé")) }
        for _ in 0..<25 { candidates.append(names.name(1 + names.number(4), alphabet: "abÉ") + suffix) }
        candidates.append(candidates[3])
        var index = SuggestionIndex(candidates)
        for _ in 0..<100 {
            let base = candidates[names.number(candidates.count)]
            let name = names.typo(of: base, edits: names.number(5))
            #expect(index.closest(to: name) == Self.reference(name, candidates), "`\(name)`")
        }
    }

    /// Typos of a thousand long names each get their suggestion within the default budget
    /// (the piece index leaves one candidate to compare; a full comparison per candidate used
    /// to spend it after a few hundred typos), with names unlike one another or alike but for
    /// their last characters.
    @Test(arguments: [false, true])
    func typosOfLongNamesAllGetTheirSuggestion(alike: Bool) {
        var names = LongNames(state: 5)
        let candidates = (0..<1000).map { n in
            alike ? String(repeating: "x", count: 197) + String(1000 + n).dropFirst() : names.name(200, alphabet: "abcdefghijklmnopqrstuvwxyz")
        }
        var index = SuggestionIndex(candidates)
        for n in 0..<1000 {
            var scalars = Array(candidates[n].unicodeScalars)
            let at = alike ? 190 - names.number(150) : names.number(200)
            scalars[at] = scalars[at] == "q" ? "r" : "q"
            #expect(index.closest(to: String(String.UnicodeScalarView(scalars))) == candidates[n])
        }
        #expect(index.budget > 0)
    }

    /// The banded distance is the full one whenever that is within the bound.
    @Test func bandedDistanceMatchesTheFullTable() {
        var names = Names(state: 99)
        var index = SuggestionIndex([String]())
        for _ in 0..<2000 {
            let a = Array(names.next()!.unicodeScalars), b = Array(names.next()!.unicodeScalars)
            let full = Suggestion.editDistance(a, b)
            for bound in 0...SuggestionIndex.widestLimit {
                #expect(index.distance(a, b, within: bound) == (full <= bound ? full : nil), "\(a) \(b) within \(bound)")
            }
        }
    }

    /// Once its work budget is spent the index stops suggesting, rather than going on for
    /// minutes: 20,000 unknown names against 20,000 steps used to be 400 million distances.
    @Test func budgetBoundsTheWork() {
        let steps = (0..<20_000).map { "s\($0)" }
        var index = SuggestionIndex(steps, budget: 1_000_000)
        var suggested = 0
        for n in 0..<20_000 where index.closest(to: "zz\(n)") != nil { suggested += 1 }
        #expect(index.budget <= 0)
        #expect(suggested > 0, "the first names still get a suggestion")
        #expect(index.closest(to: "s1x") == nil, "nothing after the budget is spent")
    }
}
