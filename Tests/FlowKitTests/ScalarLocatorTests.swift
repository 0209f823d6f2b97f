@testable import FlowKit
import Testing

/// Offsets in a scalar's value mapped back to source positions, for every scalar style.
@Suite struct ScalarLocatorTests {
    /// The locator of the value of `key` in a one-level mapping, and the value.
    static func locator(_ yaml: String, _ key: String) throws -> (ScalarLocator, String) {
        let file = SourceFile(path: "t.yaml", text: yaml)
        let (document, diagnostics) = readYAML(file)
        try #require(diagnostics.isEmpty)
        let node = try #require(document.node(key))
        return (ScalarLocator(node: node, file: file), node.value)
    }

    /// Where the first `X` of the value lands.
    static func locationOfX(_ yaml: String, _ key: String = "k") throws -> String {
        let (locator, value) = try locator(yaml, key)
        let offset = try #require(Array(value.unicodeScalars).firstIndex(of: "X"))
        let location = locator.location(ofValueOffset: offset)
        return "\(location.line):\(location.column)"
    }

    @Test func plain() throws {
        #expect(try Self.locationOfX("k: abc X\n") == "1:8")
        #expect(try Self.locationOfX("k: é😀X\n") == "1:6", "columns count Unicode scalars")
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

    @Test func foldedFallsBackToTheScalarStart() throws {
        #expect(try Self.locationOfX("k: >\n  folded\n  X\n") == "1:4")
    }

    @Test func multiLineQuotedFallsBackToTheScalarStart() throws {
        #expect(try Self.locationOfX("k: \"one\n  X\"\n") == "1:4")
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
}
