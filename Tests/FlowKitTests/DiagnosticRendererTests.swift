import Foundation
@testable import FlowKit
import Testing

/// The one place diagnostics become text: the caret excerpt, JSON and GitHub commands.
@Suite struct DiagnosticRendererTests {
    static func diagnostic(_ text: String, line: Int, column: Int, length: Int, message: String = "bad thing",
                           help: String? = nil, notes: [Diagnostic.Note] = [], path: String = "wf.yaml") -> Diagnostic {
        Diagnostic(.error, .unknownKey, message, file: SourceFile(path: path, text: text),
                   span: SourceSpan(line: line, column: column, length: length), help: help, notes: notes)
    }

    @Test func caretRunsUnderTheWholeSpan() {
        let d = Self.diagnostic("steps:\n  - shel: echo hi\n", line: 2, column: 5, length: 4, message: "unknown key `shel` in a step",
                                help: "did you mean `shell`?")
        #expect(DiagnosticRenderer().text(d) == """
            wf.yaml:2:5: error: unknown key `shel` in a step [unknown-key]
              |
            2 |   - shel: echo hi
              |     ^^^^ did you mean `shell`?

            """)
    }

    @Test func warningsNotesAndWideGutters() {
        let text = String(repeating: "# filler\n", count: 11) + "name: x\nname: y\n"
        var d = Self.diagnostic(text, line: 13, column: 1, length: 4, message: "duplicate key `name`",
                                notes: [.init("first `name` is here", at: SourceSpan(line: 12, column: 1, length: 4))])
        d.severity = .warning
        #expect(DiagnosticRenderer().text(d) == """
            wf.yaml:13:1: warning: duplicate key `name` [unknown-key]
               |
            13 | name: y
               | ^^^^
            wf.yaml:12:1: note: first `name` is here
               |
            12 | name: x
               | ^^^^

            """)
    }

    @Test func emptySpanStillGetsOneCaret() {
        let d = Self.diagnostic("steps:\n", line: 1, column: 7, length: 0)
        #expect(DiagnosticRenderer().text(d).hasSuffix("1 | steps:\n  |       ^\n"))
    }

    @Test func spanOverSeveralLinesUnderlinesToTheEndOfTheFirst() {
        let file = SourceFile(path: "wf.yaml", text: "a: [1,\n  2]\n")
        let d = Diagnostic(.error, .wrongType, "m", file: file,
                           span: SourceSpan(start: .init(line: 1, column: 4), end: .init(line: 2, column: 5)))
        #expect(DiagnosticRenderer().text(d).hasSuffix("1 | a: [1,\n  |    ^^^\n"))
    }

    @Test func tabsAndControlCharactersKeepTheCaretAligned() {
        let d = Self.diagnostic("a:\t\u{7}x\n", line: 1, column: 5, length: 1)
        #expect(DiagnosticRenderer().text(d).hasSuffix("1 | a:→\\u{7}x\n  |         ^\n"))
    }

    /// An ESC, CR or NUL from the workflow never reaches the terminal raw: in the message,
    /// the help, notes, the file name and the excerpt it is escaped, the caret still under
    /// the span.
    @Test func controlCharactersAreEscapedEverywhereInText() {
        let d = Self.diagnostic("\u{1B}[31mkey\u{0}: x\n", line: 1, column: 12, length: 1,
                                message: "unknown key `\u{1B}[31mkey\r\u{0}`", help: "did you mean `\u{9B}2J`?",
                                notes: [.init("note \u{7F}", at: SourceSpan(line: 1, column: 1, length: 4))],
                                path: "a\u{1B}.yaml")
        let text = DiagnosticRenderer().text(d)
        #expect(!text.unicodeScalars.contains { ControlEscaping.isControl($0) && $0 != "\n" }, "\(text.debugDescription)")
        #expect(text == #"""
            a\u{1B}.yaml:1:12: error: unknown key `\u{1B}[31mkey\u{D}\u{0}` [unknown-key]
              |
            1 | \u{1B}[31mkey\u{0}: x
              |                     ^ did you mean `\u{9B}2J`?
            a\u{1B}.yaml:1:1: note: note \u{7F}
              |
            1 | \u{1B}[31mkey\u{0}: x
              | ^^^^^^^^^

            """#)
    }

    /// The caret counts terminal columns: an emoji or a CJK character is two wide, a
    /// combining accent none (columns in the message still count characters).
    @Test func wideCharactersBeforeTheSpan() {
        let d = Self.diagnostic("k: \"é😀\" x\n", line: 1, column: 9, length: 1)
        #expect(DiagnosticRenderer().text(d).hasSuffix("1 | k: \"é😀\" x\n  |          ^\n"))
        let cjk = Self.diagnostic("k: 名前 x\n", line: 1, column: 7, length: 1)
        #expect(DiagnosticRenderer().text(cjk).hasSuffix("1 | k: 名前 x\n  |         ^\n"))
        let combining = Self.diagnostic("k: e\u{301} x\n", line: 1, column: 7, length: 1)
        #expect(DiagnosticRenderer().text(combining).hasSuffix("  |      ^\n"))
        // 👍🏽 (a skin tone), 👨‍👩‍👧 (joined), 🇫🇷 (a flag): two columns each.
        let joined = Self.diagnostic("k: 👍🏽👨\u{200D}👩\u{200D}👧🇫🇷 x\n", line: 1, column: 14, length: 1)
        #expect(DiagnosticRenderer().text(joined).hasSuffix("  |           ^\n"), "\(DiagnosticRenderer().text(joined))")
    }

    @Test func lineOutsideTheFileHasNoExcerpt() {
        let d = Self.diagnostic("a: 1\n", line: 5, column: 1, length: 1)
        #expect(DiagnosticRenderer().text(d) == "wf.yaml:5:1: error: bad thing [unknown-key]\n")
    }

    @Test func fiveMegabyteLineIsShownAsAWindowAroundTheSpan() throws {
        let count = 5_000_000
        let column = 2_500_000
        var scalars = Array(repeating: "x", count: count)
        scalars[column - 1] = "E"
        let line = scalars.joined()
        let d = Self.diagnostic("k: v\n" + line + "\n", line: 2, column: column, length: 3)
        let renderer = DiagnosticRenderer()
        let lines = renderer.text(d).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let source = try #require(lines.first { $0.hasPrefix("2 | ") })
        let carets = try #require(lines.first { $0.contains("^") })
        #expect(source.count <= renderer.maxLineWidth + 10, "the excerpt is windowed")
        #expect(source.contains("…"))
        // The caret sits under the E.
        let sourceColumn = try #require(source.firstIndex(of: "E")).utf16Offset(in: source)
        let caretColumn = try #require(carets.firstIndex(of: "^")).utf16Offset(in: carets)
        #expect(sourceColumn == caretColumn)
        #expect(carets.filter { $0 == "^" }.count == 3)
    }

    @Test(arguments: [1, 2, 30, 41, 159, 160, 161, 200, 4_960, 4_999, 5_000])
    func windowKeepsTheCaretUnderTheSpanAnywhereOnALongLine(column: Int) throws {
        var scalars = Array(repeating: "x", count: 5_000)
        scalars[column - 1] = "E"
        let d = Self.diagnostic(scalars.joined() + "\n", line: 1, column: column, length: 1)
        let lines = DiagnosticRenderer().text(d).split(separator: "\n").map(String.init)
        let source = try #require(lines.first { $0.hasPrefix("1 | ") })
        let carets = try #require(lines.last)
        #expect(Array(source).firstIndex(of: "E") == Array(carets).firstIndex(of: "^"), "\(source)\n\(carets)")
        #expect(source.count <= 170)
    }

    @Test func colorWrapsPartsInEscapes() {
        let d = Self.diagnostic("a: 1\n", line: 1, column: 1, length: 1)
        let colored = DiagnosticRenderer(useColor: true).text(d)
        #expect(colored.contains("\u{1B}[1;31merror\u{1B}[0m"))
        #expect(!DiagnosticRenderer().text(d).contains("\u{1B}"))
    }

    // MARK: JSON

    @Test func jsonEscapesAndRoundTrips() throws {
        let message = "quote \" backslash \\ newline \n tab \t bell \u{7} del \u{7F} é 😀"
        let d = Self.diagnostic("a: 1\n", line: 1, column: 2, length: 3, message: message, help: "try `x`",
                                notes: [.init("note \"n\"", at: SourceSpan(line: 1, column: 1, length: 1))],
                                path: "dir/we\"ird.yaml")
        let json = DiagnosticRenderer().json([d, d])
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(parsed.count == 2)
        let first = parsed[0]
        #expect(first["message"] as? String == message)
        #expect(first["file"] as? String == "dir/we\"ird.yaml")
        #expect(first["line"] as? Int == 1)
        #expect(first["column"] as? Int == 2)
        #expect(first["end_line"] as? Int == 1)
        #expect(first["end_column"] as? Int == 5)
        #expect(first["severity"] as? String == "error")
        #expect(first["code"] as? String == "unknown-key")
        #expect(first["help"] as? String == "try `x`")
        let notes = try #require(first["notes"] as? [[String: Any]])
        #expect(notes.first?["message"] as? String == "note \"n\"")
        #expect(!json.contains("\u{7}"), "control characters are escaped")
    }

    @Test func jsonOfNothingIsAnEmptyArray() {
        #expect(DiagnosticRenderer().json([]) == "[]\n")
    }

    @Test func jsonHelpIsNullWhenAbsent() throws {
        let json = DiagnosticRenderer().json([Self.diagnostic("a\n", line: 1, column: 1, length: 1)])
        let parsed = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect(parsed[0]["help"] is NSNull)
    }

    // MARK: GitHub

    @Test func githubCommandsEscapeDataAndProperties() {
        let d = Self.diagnostic("a\n", line: 1, column: 1, length: 1, message: "50% done\nnext line\r", help: "a, b: c",
                                path: "my dir/a,b:c%.yaml")
        #expect(DiagnosticRenderer().github([d]) == """
            ::error file=my dir/a%2Cb%3Ac%25.yaml,line=1,col=1,endLine=1,endColumn=2,title=flow unknown-key::50%25 done%0Anext line%0D (a, b: c)

            """)
    }

    /// CR LF is one `Character`: escaped by character, it went through raw.
    @Test func githubCommandsEscapeCRLFInDataAndProperties() {
        let d = Self.diagnostic("a\n", line: 1, column: 1, length: 1, message: "one\r\ntwo", path: "a\r\nb.yaml")
        #expect(DiagnosticRenderer().github([d]) == """
            ::error file=a%0D%0Ab.yaml,line=1,col=1,endLine=1,endColumn=2,title=flow unknown-key::one%0D%0Atwo

            """)
    }

    @Test func githubCommandsEscapeOtherControlCharacters() {
        let d = Self.diagnostic("a\n", line: 1, column: 1, length: 1, message: "key `a\u{0}b\u{1B}c`", path: "x\u{0}.yaml")
        #expect(DiagnosticRenderer().github([d]) == #"""
            ::error file=x\u{0}.yaml,line=1,col=1,endLine=1,endColumn=2,title=flow unknown-key::key `a\u{0}b\u{1B}c`

            """#)
    }

    @Test func githubWarnings() {
        var d = Self.diagnostic("a\n", line: 3, column: 4, length: 2)
        d.severity = .warning
        #expect(DiagnosticRenderer().github([d]).hasPrefix("::warning file=wf.yaml,line=3,col=4,endLine=3,endColumn=6,"))
    }

    @Test func diagnosticsFromALoadRenderEveryFormat() throws {
        let loaded = load("steps:\n  - shel: x\n  - delay: soon\n")
        let renderer = DiagnosticRenderer()
        #expect(renderer.text(loaded.diagnostics).components(separatedBy: "error:").count == 3)
        #expect(renderer.github(loaded.diagnostics).split(separator: "\n").count == 2)
        let parsed = try JSONSerialization.jsonObject(with: Data(renderer.json(loaded.diagnostics).utf8)) as? [Any]
        #expect(parsed?.count == 2)
    }
}
