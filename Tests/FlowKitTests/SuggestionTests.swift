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
}
