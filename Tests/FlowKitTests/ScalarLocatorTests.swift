@testable import FlowKit
import Testing

/// Offsets in a scalar's value mapped back to source positions, for every scalar style.
@Suite struct ScalarLocatorTests {
    /// The locator of the value of `key` in a one-level mapping, and the value.
    static func locator(_ yaml: String, _ path: Any...) throws -> (ScalarLocator, String) {
        try locator(yaml, path: path)
    }

    static func locator(_ yaml: String, path: [Any]) throws -> (ScalarLocator, String) {
        let file = SourceFile(path: "t.yaml", text: yaml)
        let (document, diagnostics) = readYAML(file)
        try #require(diagnostics.isEmpty)
        let node = try #require(document.node(path: path.isEmpty ? ["k"] : path))
        return (ScalarLocator(node: node, file: file), node.value)
    }

    /// Where the first `X` of the value lands.
    static func locationOfX(_ yaml: String, _ path: Any...) throws -> String {
        let (locator, value) = try locator(yaml, path: path)
        let offset = try #require(Array(value.unicodeScalars).firstIndex(of: "X"))
        let location = locator.location(ofValueOffset: offset)
        return "\(location.line):\(location.column)"
    }

    @Test func plain() throws {
        #expect(try Self.locationOfX("k: abc X\n") == "1:8")
        #expect(try Self.locationOfX("k: é😀X\n") == "1:6", "columns count Unicode scalars")
    }

    /// Scalars of one line are located from their own text (a generated line of 10,000
    /// expressions was decoded whole for each of them): the columns stay exact after wide
    /// and escaped characters earlier on the line, in any order of lookup.
    @Test func scalarsSharingALine() throws {
        let yaml = #"k: {a: "é\u00e9 X", b: 'x''😀 X', c: p😀 X, d: "X"}"# + "\n"
        #expect(try Self.locationOfX(yaml, "k", "c") == "1:40")
        #expect(try Self.locationOfX(yaml, "k", "a") == "1:17")
        #expect(try Self.locationOfX(yaml, "k", "b") == "1:30")
        #expect(try Self.locationOfX(yaml, "k", "d") == "1:47")
    }

    @Test func byteIndexOfAColumnGoesOnFromTheLastOneFound() {
        let file = SourceFile(path: "t.yaml", text: "ab\né😀c\n")
        // Line 2 starts at byte 3: é is 2 bytes, 😀 4.
        #expect([1, 2, 3, 4, 9].map { file.byteIndex(line: 2, column: $0) } == [3, 5, 9, 10, 10])
        #expect(file.byteIndex(line: 2, column: 2) == 5, "back on the line: searched from its start")
        #expect(file.byteIndex(line: 1, column: 2) == 1)
        #expect(file.byteIndex(line: 2, column: 3) == 9)
    }

    @Test func singleQuotedWithEscapedQuotes() throws {
        #expect(try Self.locationOfX("k: 'it''s X'\n") == "1:11")
        #expect(try Self.locationOfX("k: ''' X'\n") == "1:8")
    }

    @Test func doubleQuotedWithEscapes() throws {
        #expect(try Self.locationOfX(#"k: "a\tb\"c X""# + "\n") == "1:13")
        #expect(try Self.locationOfX(#"k: "\x41\u00e9\U0001F600 X""# + "\n") == "1:26")
        #expect(try Self.locationOfX(#"k: "\\ X""# + "\n") == "1:8")
    }

    @Test func literalBlock() throws {
        let yaml = """
            k: |
              first line
                indented X
              last
            """
        #expect(try Self.locationOfX(yaml) == "3:14")
        let (locator, value) = try Self.locator(yaml, "k")
        let lastOffset = "first line\n  indented X\n".unicodeScalars.count
        #expect(Array(value.unicodeScalars)[lastOffset] == "l")
        let last = locator.location(ofValueOffset: lastOffset)
        #expect("\(last.line):\(last.column)" == "4:3")
    }

    @Test func literalBlockAfterBlankLines() throws {
        #expect(try Self.locationOfX("k: |\n\n  a\n\n  bX\n") == "5:4")
    }

    /// Every character of the value that is written as itself in the source is located
    /// on it (an escape on its backslash); folded line breaks may land anywhere.
    static func expectEveryCharacterLocated(_ yaml: String, _ path: Any...,
                                            sourceLocation: Testing.SourceLocation = #_sourceLocation) throws {
        let file = SourceFile(path: "t.yaml", text: yaml)
        let (locator, value) = try locator(yaml, path: path)
        for (offset, scalar) in value.unicodeScalars.enumerated() where scalar != " " && scalar != "\n" {
            let location = locator.location(ofValueOffset: offset)
            let line = Array(file.lineText(location.line).unicodeScalars)
            let found = location.column - 1 < line.count ? line[location.column - 1] : nil
            #expect(found == scalar || found == "\\", "value offset \(offset) (`\(scalar)`) located at \(location), on `\(found.map(String.init) ?? "nothing")`",
                    sourceLocation: sourceLocation)
        }
    }

    @Test func folded() throws {
        #expect(try Self.locationOfX("k: >\n  folded\n  X\n") == "3:3")
        #expect(try Self.locationOfX("k: >-\n  a\n\n  b\n    more\n  X\n") == "6:3", "blank and more-indented lines")
        try Self.expectEveryCharacterLocated("k: >\n  one two\n\n\n  three\n    four\n  five\n\nnext: 1\n")
        try Self.expectEveryCharacterLocated("k: >+\n  keep\n\n")
    }

    /// An indentation indicator (`|2`) makes the first line's extra spaces part of the value.
    @Test func blockScalarsWithAnIndentationIndicator() throws {
        #expect(try Self.locationOfX("k: |2\n      X\n") == "2:7")
        #expect(try Self.locationOfX("a:\n  k: |2\n        X\n", "a", "k") == "3:9")
        #expect(try Self.locationOfX("a:\n  k: >-2\n       b\n      X\n", "a", "k") == "4:7")
        try Self.expectEveryCharacterLocated("k: |1\n   two spaces\n  one space\n")
    }

    @Test func multiLineQuoted() throws {
        #expect(try Self.locationOfX("k: \"one\n  X\"\n") == "2:3")
        #expect(try Self.locationOfX("k: 'one\n\n   it''s X'\n") == "3:10")
        #expect(try Self.locationOfX("k: \"a\\\n    b\\t X\"\n") == "2:9", "escaped line break, escape after it")
        try Self.expectEveryCharacterLocated("k: \"one \\u00e9\n   two\n\n   three\\\n   four \"\n")
        try Self.expectEveryCharacterLocated("k: 'one ''two''\n\n  three'\n")
    }

    @Test func multiLinePlain() throws {
        #expect(try Self.locationOfX("k: one\n  two\n\n  X # c\n") == "4:3")
        try Self.expectEveryCharacterLocated("k: one two\n  three\n\n\n  four\nnext: 1\n")
        try Self.expectEveryCharacterLocated("- a\n  b\n", 0)
    }

    @Test func anchorsAndTagsBeforeTheScalar() throws {
        #expect(try Self.locationOfX("k: &a \"b X\"\n") == "1:10")
        #expect(try Self.locationOfX("k: !!str |\n  X\n") == "2:3")
        #expect(try Self.locationOfX("k: &a\n  one X\n") == "2:7")
    }

    @Test func lineBreaksOtherThanLF() throws {
        #expect(try Self.locationOfX("k: \"one\r\n  X\"\r\n") == "2:3")
        #expect(try Self.locationOfX("k: \"one\u{2028}  X\"\n") == "2:3")
        #expect(try Self.locationOfX("k: |\r\n  a\r\n  X\r\n") == "3:3")
    }

    @Test func offsetsPastTheEndAreClamped() throws {
        let (locator, _) = try Self.locator("k: abc\n", "k")
        #expect(locator.location(ofValueOffset: 99) == FlowKit.SourceLocation(line: 1, column: 7))
        #expect(locator.location(ofValueOffset: -3) == FlowKit.SourceLocation(line: 1, column: 4))
    }

    @Test func diagnosticsInsideLiteralBlocksLandOnTheRightLine() {
        expectDiagnostics("""
            steps:
              - shell: |
                  echo start
                  echo "${{ vars.⟦unknown-reference⟧nope }}"
            """)
    }

    @Test func diagnosticsInsideMultiLineScalarsPointAtTheExpression() {
        expectDiagnostics("""
            steps:
              - shell: |2
                    echo ${{ vars.⟦unknown-reference⟧a }}
              - print: "first line
                  second ${{ vars.⟦unknown-reference⟧b }}"
              - print: first
                  second ${{ vars.⟦unknown-reference⟧c }}
              - print: >
                  first

                  second ${{ vars.⟦unknown-reference⟧d }}
              - shell: >-
                  echo
                  '⟦single-quoted-expression⟧${{ env.HOME }}'
            """)
    }
}
