@testable import FlowKit
import Testing

/// A step's last line as the live tree shows it (`TerminalText.plain`, then
/// `DisplayWidth.fit`): the cases the end-to-end tests in `TTYOutputTests` do not reach.
@Suite struct TerminalTextTests {
    static func plain(_ line: String) -> String {
        Array(line.utf8).withUnsafeBytes { TerminalText.plain($0) }
    }

    @Test(arguments: [
        ("plain text", "plain text"),
        ("\u{1B}[1;31mred\u{1B}[0m", "red"),
        ("a\u{1B}[?25lb\u{1B}[?25h", "ab"),  // private parameters (cursor hidden)
        ("a\u{1B}]8;;https://example.com\u{1B}\\link\u{1B}]8;;\u{1B}\\b", "alinkb"),  // a hyperlink, ST-terminated
        ("a\u{1B}]0;title\u{07}b", "ab"),
        ("a\u{1B}]0;unterminated", "a"),
        ("a\u{1B}(Bb", "ab"),  // a character set
        ("a\u{1B}7b\u{1B}8c", "abc"),  // cursor saved and restored
        ("a\u{1B}", "a"),
        ("a\u{9B}2Jb\u{9D}0;t\u{9C}c", "abc"),  // one-character CSI and OSC
        ("a\u{0}b\u{8}c\u{7F}d\u{85}e", "abcde"),
        ("a\tb", "a\tb"),
        ("10%\r50%\r100%", "100%"),
        ("old\rnew\r\r", "new"),
        ("\r", ""),
    ])
    func plain(_ line: String, _ expected: String) {
        #expect(Self.plain(line) == expected)
    }

    @Test func invalidUTF8IsReplaced() {
        let bytes: [UInt8] = [0x61, 0xFF, 0x62]
        #expect(bytes.withUnsafeBytes { TerminalText.plain($0) } == "a\u{FFFD}b")
    }

    @Test(arguments: [
        ("short", 10, "short", 5),
        ("exactly10!", 10, "exactly10!", 10),
        ("eleven chr!", 10, "eleven ch…", 10),
        ("漢字漢字漢字", 12, "漢字漢字漢字", 12),
        ("漢字漢字漢字", 11, "漢字漢字漢…", 11),
        ("漢字漢字漢字", 10, "漢字漢字…", 9),  // a wide character does not fit in the last column
        ("e\u{301}\u{301}xyz", 4, "e\u{301}\u{301}xyz", 4),  // combining marks take no column
        ("a\tb", 10, "a       b", 9),
        ("ab\tc\td", 20, "ab      c       d", 17),
        ("a\tbcdefghij", 10, "a       b…", 10),
        ("👍 ok", 5, "👍 ok", 5),
        // Counted the widest way a common terminal draws them: a joined emoji on its own
        // (xterm, VTE), a text emoji with VS16 as two columns (kitty, WezTerm, iTerm2).
        ("👨\u{200D}👩 x", 4, "👨\u{200D}…", 3),
        ("❤\u{FE0F}❤\u{FE0F}x", 5, "❤\u{FE0F}❤\u{FE0F}x", 5),
        ("❤\u{FE0F}❤\u{FE0F}xy", 5, "❤\u{FE0F}❤\u{FE0F}…", 5),
        ("abc", 1, "…", 1),
        ("abc", 0, "", 0),
    ])
    func fit(_ text: String, _ limit: Int, _ expected: String, _ width: Int) {
        let fitted = DisplayWidth.fit(text, in: limit)
        #expect(fitted.text == expected)
        #expect(fitted.width == width)
        #expect(DisplayWidth.rowColumns(of: fitted.text) == width)
    }
}
