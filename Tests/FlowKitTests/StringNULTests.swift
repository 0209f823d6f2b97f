@testable import FlowKit
import Testing

/// `String.containsNUL`, which guards every spawn's environment and `dir`: small strings
/// (stored inline), large ones, a NUL at either end and in the middle, and substrings.
@Suite struct StringNULTests {
    @Test(arguments: [
        ("", false),
        ("short", false),
        ("\u{0}", true),
        ("a\u{0}b", true),
        ("/dev/shm/flow-1234-6b07fe5c-97e14d93-0EIPP1/30.out", false),
        (String(repeating: "é", count: 300), false),
        (String(repeating: "x", count: 300) + "\u{0}", true),
        ("\u{0}" + String(repeating: "x", count: 300), true),
    ])
    func findsTheNULByte(_ text: String, _ expected: Bool) {
        #expect(text.containsNUL == expected)
        #expect(text.containsNUL == text.utf8.contains(0))
    }

    @Test func aSubstringsOwnBytesAreScanned() {
        let whole = "before\u{0}" + String(repeating: "y", count: 40)
        let after = String(whole.split(separator: "\u{0}")[1])
        #expect(!after.containsNUL)
        #expect(whole.containsNUL)
    }
}
