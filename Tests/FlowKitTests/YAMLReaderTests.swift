@testable import FlowKit
import Testing

/// The libyaml event reader: spans, the problems YAML libraries let through (duplicate keys,
/// tabs, alias bombs, deep nesting), and hostile input that must never crash.
@Suite struct YAMLReaderTests {
    @Test func scalarsSequencesAndMappingsKeepTheirSpans() throws {
        let (document, diagnostics) = readYAML("""
            name: demo
            steps:
              - print: "hi"
              - 'x'
            """)
        #expect(diagnostics.isEmpty)
        let root = try #require(document.root)
        #expect(document[root].kind == .mapping)
        #expect(document.keys(root) == ["name", "steps"])
        let name = try #require(document.node("name"))
        #expect(name.value == "demo")
        #expect(name.style == .plain)
        #expect(at(name.span) == "1:7")
        let steps = try #require(document.node("steps"))
        #expect(steps.kind == .sequence)
        #expect(steps.childCount == 2)
        let print = try #require(document.node("steps", 0, "print"))
        #expect(print.style == .doubleQuoted)
        #expect(print.value == "hi")
        #expect(at(print.span) == "3:12")
        #expect(print.span.end == FlowKit.SourceLocation(line: 3, column: 16))
        let quoted = try #require(document.node("steps", 1))
        #expect(quoted.style == .singleQuoted)
        #expect(at(quoted.span) == "4:5")
    }

    @Test func plainScalarTyping() throws {
        let (document, _) = readYAML("""
            a: true
            b: "true"
            c: 42
            d: 1.5
            e: ~
            f:
            g: yes
            """)
        #expect(document.node("a")?.boolValue == true)
        #expect(document.node("b")?.boolValue == nil, "a quoted scalar is always a string")
        #expect(document.node("c")?.intValue == 42)
        #expect(document.node("d")?.doubleValue == 1.5)
        #expect(document.node("e")?.isNull == true)
        #expect(document.node("f")?.isNull == true)
        #expect(document.node("g")?.boolValue == nil, "YAML 1.2: `yes` is a string")
        #expect(document.node("g")?.typeDescription == "a string")
    }

    // MARK: Duplicate keys

    @Test func duplicateKeyIsReportedAtTheSecondOccurrenceWithANoteAtTheFirst() throws {
        let (document, diagnostics) = readYAML("""
            steps:
              - print: one
                name: a
                print: two
            """)
        try #require(diagnostics.count == 1)
        let d = diagnostics[0]
        #expect(d.code == .duplicateKey)
        #expect(at(d.span) == "4:5")
        #expect(d.span.end == FlowKit.SourceLocation(line: 4, column: 10), "the caret covers the key")
        try #require(d.notes.count == 1)
        #expect(at(d.notes[0].span) == "2:5")
        // The first value is kept.
        #expect(document.node("steps", 0, "print")?.value == "one")
    }

    /// A file that ends where a value was expected (`- shell: [` last, trailing blank
    /// lines or not) is reported just past what was written, where more was expected,
    /// not at column 1 of the last line.
    @Test(arguments: ["steps:\n  - shell: [\n", "steps:\n  - shell: [", "steps:\n  - shell: [\n\n   \n"])
    func aFileEndingWhereAValueWasExpectedIsReportedWhereItEnds(_ text: String) throws {
        let (_, diagnostics) = readYAML(text)
        try #require(diagnostics.count == 1)
        #expect(diagnostics[0].code == .yamlSyntax)
        #expect(at(diagnostics[0].span) == "2:13", "\(diagnostics[0])")
        #expect(diagnostics[0].help == "the file ends here: something before it is left unfinished")
    }

    /// libyaml's reader reports a control character by byte offset: the diagnostic is at
    /// the character (after a BOM and multi-byte characters too), not at 1:1.
    @Test(arguments: [
        ("steps:\n  - print: ab\u{1B}cd\n", "2:14"),
        ("\u{FEFF}steps:\n  - print: ab\u{7F}cd\n", "2:14"),
        ("steps:\n  - print: éé\u{01}x\n", "2:14"),
    ])
    func controlCharacterIsReportedWhereItIs(_ text: String, _ expected: String) throws {
        let (_, diagnostics) = readYAML(text)
        try #require(diagnostics.count == 1)
        #expect(diagnostics[0].code == .yamlSyntax)
        #expect(at(diagnostics[0].span) == expected)
    }

    /// `<<` twice in one mapping is a duplicate key (the list form merges several).
    /// Keys a `<<: *a` merge brought in are marked with that `*a`; an alias used as a key
    /// (`*k: v`) and an inline merge (`<<: {…}`, written in place) are not.
    @Test func mergedKeysAreMarkedWithTheirMerge() throws {
        let (document, diagnostics) = readYAML("a: &a {k: 1}\nk: &k key\nb:\n  <<: [{i: 0}, *a]\n  *k : 2\n")
        #expect(diagnostics.isEmpty)
        #expect(Array(document.mergeSites.values).map { "\($0.start.line):\($0.start.column)" } == ["4:16"])
        #expect(document.aliasSites.count == 3, "the two alias uses and the merged key's copy")
    }

    @Test func unknownAliasSuggestsTheAlias() throws {
        let (_, diagnostics) = readYAML("a: &base 1\nb: *bsae\n")
        let d = try #require(diagnostics.first)
        #expect(Spot(d) == Spot(.yamlSyntax, 2, 4))
        #expect(d.help == "did you mean `*base`?")
    }

    @Test func mergeKeyTwiceIsADuplicate() throws {
        let (_, diagnostics) = readYAML("a: &a {k: 1}\nb: &b {j: 2}\nc:\n  <<: *a\n  <<: *b\nd:\n  <<: [*a, *b]\n")
        try #require(diagnostics.count == 1)
        #expect(diagnostics[0].code == .duplicateKey)
        #expect(at(diagnostics[0].span) == "5:3")
    }

    @Test func duplicateKeysEverywhereAreAllReported() {
        let (_, diagnostics) = readYAML("""
            a: 1
            b: {x: 1, y: 2, x: 3}
            a: 2
            c:
              - k: 1
                k: 2
            a: 3
            """)
        #expect(diagnostics.map(Spot.init) == [
            Spot(.duplicateKey, 2, 17), Spot(.duplicateKey, 3, 1), Spot(.duplicateKey, 6, 5), Spot(.duplicateKey, 7, 1),
        ])
        // Every later copy points back at the first one.
        #expect(diagnostics.filter { $0.span.start.column == 1 }.allSatisfy { at($0.notes[0].span) == "1:1" })
    }

    @Test func quotedAndPlainSpellingsOfOneKeyAreDuplicates() {
        let (_, diagnostics) = readYAML("key: 1\n\"key\": 2\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.duplicateKey, 2, 1)])
    }

    // MARK: Tabs

    @Test func tabIndentationIsReportedAtTheTab() {
        let (document, diagnostics) = readYAML("steps:\n\t- print: x\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.tabIndentation, 2, 1)])
        #expect(document.root == nil)
    }

    @Test func tabAfterSpacesIsReportedAtTheTab() {
        let (_, diagnostics) = readYAML("steps:\n  - print: x\n    \tname: y\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.tabIndentation, 3, 5)])
    }

    @Test func tabsInsideValuesAreFine() {
        let (_, diagnostics) = readYAML("a:\t1\nb: \"x\ty\"\n")
        #expect(diagnostics.isEmpty)
    }

    // MARK: Encoding

    @Test(arguments: [
        // (bytes before the bad one on its line, line, expected column)
        ([UInt8]("steps:\n  - print: \"ab".utf8) + [0xFF] + [UInt8]("c\"\n".utf8), 2, 15),
        ([UInt8]("a: \u{E9}".utf8) + [0xC3, 0x28] + [UInt8]("\n".utf8), 1, 5),   // é counts as one column
        ([0x80], 1, 1),
        ([UInt8]("a: ".utf8) + [0xED, 0xA0, 0x80], 1, 4),                          // a UTF-16 surrogate
        ([UInt8]("a: ".utf8) + [0xC0, 0xAF], 1, 4),                                 // an overlong encoding
        ([UInt8]("a: x\nb: ".utf8) + [0xF0, 0x9F, 0x98], 2, 4),                     // truncated at the end
    ] as [([UInt8], Int, Int)])
    func invalidUTF8IsReportedWithItsLineAndColumn(bytes: [UInt8], line: Int, column: Int) {
        let (document, diagnostics) = readYAML(SourceFile(path: "t.yaml", bytes: bytes))
        #expect(diagnostics.map(Spot.init) == [Spot(.invalidUTF8, line, column)])
        #expect(document.root == nil)
    }

    @Test func validMultiByteTextIsAccepted() {
        let (document, diagnostics) = readYAML("msg: \"héllo 😀 ✓\"\n")
        #expect(diagnostics.isEmpty)
        #expect(document.node("msg")?.value == "héllo 😀 ✓")
    }

    // MARK: Hostile input

    @Test func billionLaughsIsStoppedByTheAliasLimit() throws {
        var lines = [#"a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]"#]
        var previous = "a"
        for name in ["b", "c", "d", "e", "f", "g", "h", "i", "j"] {
            lines.append("\(name): &\(name) [" + Array(repeating: "*\(previous)", count: 9).joined(separator: ",") + "]")
            previous = name
        }
        let (document, diagnostics) = readYAML(lines.joined(separator: "\n") + "\n")
        let d = try #require(diagnostics.first)
        #expect(diagnostics.count == 1)
        #expect(d.code == .aliasLimit)
        #expect(d.span.start.line <= lines.count)
        #expect(document.root == nil)
    }

    @Test func modestAliasUseIsFine() {
        let (document, diagnostics) = readYAML("a: &x [1, 2]\nb: *x\nc: *x\n")
        #expect(diagnostics.isEmpty)
        #expect(document.node("c")?.childCount == 2)
    }

    @Test func aliasExpansionLimitIsConfigurable() {
        var limits = YAMLReader.Limits()
        limits.maxAliasExpansion = 5
        let (_, diagnostics) = readYAML("a: &x [1, 2, 3]\nb: *x\nc: *x\n", limits: limits)
        #expect(diagnostics.map(Spot.init) == [Spot(.aliasLimit, 3, 4)])
    }

    /// The text aliases repeat is bounded too, not only their nodes: each use of an alias
    /// is read again by every later phase. Found by hand while fuzzing: nested aliases
    /// of one 500 KB scalar, 111,111 uses in 311,000 nodes, took a minute to validate.
    @Test func aliasedTextIsBoundedBesideNodes() {
        var limits = YAMLReader.Limits()
        limits.maxAliasText = 10
        let (document, diagnostics) = readYAML("a: &x abcdef\nb: *x\nc: *x\n", limits: limits)
        #expect(diagnostics.map(Spot.init) == [Spot(.aliasLimit, 3, 4)])
        #expect(diagnostics.first?.message == "aliases expand to more than 10 bytes of text")
        #expect(document.root == nil)
        // A collection's keys and values count, each use once.
        let (_, nested) = readYAML("a: &x {key: abc}\nb: *x\n", limits: limits)
        #expect(nested.isEmpty, "6 bytes once")
        let (_, twice) = readYAML("a: &x {key: abc}\nb: [*x, *x]\n", limits: limits)
        #expect(twice.map(Spot.init) == [Spot(.aliasLimit, 2, 9)])
    }

    @Test func recursiveAliasIsAnError() {
        let (_, diagnostics) = readYAML("a: &x [1, *x]\n")
        #expect(diagnostics.map(\.code) == [.aliasLimit])
    }

    @Test func unknownAliasIsASyntaxError() {
        let (_, diagnostics) = readYAML("a: &anchor 1\nb: *anchr\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.yamlSyntax, 2, 4)])
    }

    @Test func tenThousandDeepFlowSequenceIsTooDeep() {
        let text = "steps: " + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "\n"
        let (document, diagnostics) = readYAML(text)
        #expect(diagnostics.map(\.code) == [.nestingTooDeep])
        #expect(diagnostics.first?.span.start.line == 1)
        #expect(document.root == nil)
    }

    @Test func unclosedTenThousandDeepFlowSequenceIsTooDeep() {
        let (_, diagnostics) = readYAML(String(repeating: "[", count: 10_000))
        #expect(diagnostics.map(\.code) == [.nestingTooDeep])
    }

    @Test func tenThousandDeepBlockMappingIsTooDeep() throws {
        var text = ""
        for depth in 0..<10_000 { text += String(repeating: " ", count: depth) + "a:\n" }
        let (document, diagnostics) = readYAML(text)
        let d = try #require(diagnostics.first)
        #expect(diagnostics.count == 1)
        #expect(d.code == .nestingTooDeep)
        // The first mapping that is one too deep: the root mapping is level 1.
        #expect(at(d.span) == "201:201")
        #expect(document.root == nil)
    }

    @Test func nestingAtTheLimitIsAccepted() {
        var limits = YAMLReader.Limits()
        limits.maxDepth = 10
        let ok = String(repeating: "[", count: 10) + String(repeating: "]", count: 10)
        #expect(readYAML(ok, limits: limits).1.isEmpty)
        let deep = String(repeating: "[", count: 11) + String(repeating: "]", count: 11)
        #expect(readYAML(deep, limits: limits).1.map(Spot.init) == [Spot(.nestingTooDeep, 1, 11)])
    }

    @Test func fiveMegabyteLineParses() throws {
        let long = String(repeating: "x", count: 5_000_000)
        let (document, diagnostics) = readYAML("steps:\n  - print: \(long)\n")
        #expect(diagnostics.isEmpty)
        let print = try #require(document.node("steps", 0, "print"))
        #expect(print.value.utf8.count == 5_000_000)
        #expect(print.span.end == FlowKit.SourceLocation(line: 2, column: 12 + 5_000_000))
    }

    @Test func oneMegabyteOfRandomBytesGivesAnErrorNotACrash() {
        var generator = SplitMix(seed: 0x5EED)
        for _ in 0..<3 {
            let bytes = (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
            let loaded = LoadedWorkflow.load(SourceFile(path: "garbage.bin", bytes: bytes))
            #expect(loaded.errorCount > 0)
            #expect(loaded.workflow == nil)
        }
    }

    @Test func oneMegabyteOfRandomAsciiGivesAnErrorNotACrash() {
        // Valid UTF-8, so libyaml itself sees the garbage.
        var generator = SplitMix(seed: 42)
        let alphabet = Array("ab: -[]{},&*!|>'\"%@`#?\n\t\r  xyz0123456789".utf8)
        for _ in 0..<3 {
            let bytes = (0..<(1 << 20)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] }
            let loaded = LoadedWorkflow.load(SourceFile(path: "garbage.txt", bytes: bytes))
            #expect(loaded.errorCount > 0)
        }
    }

    @Test func nulBytesAreAnError() {
        let loaded = LoadedWorkflow.load(SourceFile(path: "t.yaml", bytes: Array("steps:\n  - print: a\0b\n".utf8)))
        #expect(loaded.errorCount > 0)
    }

    @Test func wideEncodingsWithoutAByteOrderMarkAreToldByTheirNULBytes() {
        let text = "steps: []\n"
        let cases: [([UInt8], String?)] = [
            (Array(text.utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] }), "UTF-16LE"),
            (Array(text.utf16.flatMap { [UInt8($0 >> 8), UInt8($0 & 0xFF)] }), "UTF-16BE"),
            (Array(text.unicodeScalars.flatMap { [UInt8($0.value), 0, 0, 0] }), "UTF-32LE"),
            (Array(text.unicodeScalars.flatMap { [0, 0, 0, UInt8($0.value)] }), "UTF-32BE"),
            (Array("s\0".utf8), "UTF-16LE"),
            (Array(text.utf8), nil), (Array("\0\0\0".utf8), nil), ([0x61], nil), ([0xC3, 0x00], nil),
        ]
        for (bytes, encoding) in cases {
            #expect(YAMLReader.wideEncodingWithoutByteOrderMark(bytes) == encoding, "\(bytes.prefix(4))")
            let (_, diagnostics) = readYAML(SourceFile(path: "t.yaml", bytes: bytes))
            if let encoding {
                #expect(diagnostics.map(Spot.init) == [Spot(.invalidUTF8, 1, 1)])
                #expect(diagnostics.first?.help == "flow reads workflows as UTF-8: convert it with `iconv -f \(encoding) -t UTF-8`")
            }
        }
    }

    /// A UTF-32 byte order mark starts like UTF-16 LE's (FF FE): the help named UTF-16 for
    /// it, or Latin-1 for UTF-32 BE's.
    @Test(arguments: [([UInt8]([0xFF, 0xFE, 0, 0, 0x73, 0, 0, 0]), "UTF-32"), ([0, 0, 0xFE, 0xFF, 0, 0, 0, 0x73], "UTF-32"),
                      ([0xFF, 0xFE, 0x73, 0], "UTF-16"), ([0xFE, 0xFF, 0, 0x73], "UTF-16")])
    func aByteOrderMarkNamesItsEncoding(bytes: [UInt8], encoding: String) {
        let (_, diagnostics) = readYAML(SourceFile(path: "t.yaml", bytes: bytes))
        #expect(diagnostics.map(\.code) == [.invalidUTF8])
        #expect(diagnostics.first?.help?.hasSuffix("convert it with `iconv -f \(encoding) -t UTF-8`") == true, "\(diagnostics)")
    }

    @Test func byteOrderMarkIsAccepted() {
        // Editors on Windows often start UTF-8 files with a BOM (EF BB BF).
        let loaded = LoadedWorkflow.load(SourceFile(path: "t.yaml", bytes: [0xEF, 0xBB, 0xBF] + Array("version: 2\nsteps: [a]\n".utf8)))
        #expect(loaded.diagnostics.map(\.code) == [.unsupportedVersion])
        #expect(loaded.diagnostics.first?.span.start.line == 1)
    }

    @Test func byteOrderMarkIsNeitherAColumnNorShown() {
        let loaded = LoadedWorkflow.load(SourceFile(path: "t.yaml", bytes: [0xEF, 0xBB, 0xBF] + Array("stepz:\n  - print: hi\n".utf8)))
        // `stepz` holding a list stands in for `steps`: its unknown key is the one error.
        #expect(loaded.diagnostics.map(Spot.init) == [Spot(.unknownKey, 1, 1)])
        #expect(rendered(loaded.diagnostics).contains("1 | stepz:\n"), "no byte order mark in the excerpt")
    }

    /// libyaml counts NEL, LS, PS and a lone CR as line breaks; the line index must agree,
    /// or every position after one is a line off and its excerpt missing.
    @Test(arguments: ["\u{85}", "\u{2028}", "\u{2029}", "\r"])
    func unicodeLineBreaksCountAsLibyamlCountsThem(lineBreak: String) {
        let loaded = load("steps:\n  - print: \"a\(lineBreak)b\"\n  - delay: soon\n")
        #expect(loaded.diagnostics.map(Spot.init) == [Spot(.invalidDuration, 4, 12)])
        #expect(rendered(loaded.diagnostics).contains("4 |   - delay: soon\n"))
        #expect(loaded.file.lineCount == 4)
    }

    @Test func crlfLineEndingsKeepPositions() {
        let loaded = load("steps:\r\n  - print: x\r\n  - delay: soon\r\n")
        #expect(loaded.diagnostics.map(Spot.init) == [Spot(.invalidDuration, 3, 12)])
        #expect(rendered(loaded.diagnostics).contains("3 |   - delay: soon\n"), "no carriage return in the excerpt")
    }

    // MARK: Documents

    @Test func secondDocumentIsReportedAtItsStart() {
        let (_, diagnostics) = readYAML("a: 1\n---\nb: 2\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.multipleDocuments, 2, 1)])
    }

    @Test func explicitDocumentMarkersAroundOneDocumentAreFine() {
        let (document, diagnostics) = readYAML("---\na: 1\n...\n")
        #expect(diagnostics.isEmpty)
        #expect(document.node("a")?.value == "1")
    }

    @Test func documentAfterAnEndMarkerIsASecondDocument() {
        let (_, diagnostics) = readYAML("---\na: 1\n...\n---\nb: 2\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.multipleDocuments, 4, 1)])
    }

    @Test func emptyInputHasNoRoot() {
        let (document, diagnostics) = readYAML("# just a comment\n")
        #expect(diagnostics.isEmpty)
        #expect(document.root == nil)
    }

    // MARK: Merge keys

    @Test func mergeKeyCopiesEntriesWithoutOverridingLocalKeys() throws {
        let (document, diagnostics) = readYAML("""
            base: &base {timeout: 5s, retry: 2}
            step:
              <<: *base
              timeout: 1s
              print: x
            """)
        #expect(diagnostics.isEmpty)
        let step = try #require(document.value("step", in: document.root!))
        #expect(Set(document.keys(step)) == ["timeout", "retry", "print"])
        #expect(document.node("step", "timeout")?.value == "1s")
        #expect(document.node("step", "retry")?.value == "2")
    }

    @Test func mergeKeyTakesAListOfMappingsFirstWins() throws {
        let (document, diagnostics) = readYAML("""
            a: &a {x: 1, y: 1}
            b: &b {y: 2, z: 2}
            c:
              <<: [*a, *b]
            """)
        #expect(diagnostics.isEmpty)
        #expect(document.node("c", "x")?.value == "1")
        #expect(document.node("c", "y")?.value == "1")
        #expect(document.node("c", "z")?.value == "2")
    }

    @Test func mergeOfANonMappingIsAnError() {
        let (_, diagnostics) = readYAML("a:\n  <<: 5\n  b: 1\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.wrongType, 2, 7)])
    }

    @Test func quotedLessThanLessThanIsAnOrdinaryKey() {
        let (document, diagnostics) = readYAML("a:\n  '<<': 5\n")
        #expect(diagnostics.isEmpty)
        #expect(document.node("a", "<<")?.value == "5")
    }

    // MARK: Tags and syntax errors

    @Test func coreTagsAreAcceptedOthersReported() {
        let (document, diagnostics) = readYAML("a: !!str 5\nb: !custom x\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.unsupportedTag, 2, 4)])
        #expect(document.node("a")?.tag == "tag:yaml.org,2002:str")
        #expect(document.node("a")?.intValue == nil, "!!str 5 is a string")
    }

    /// `if: !vars.deploy` (a negation GitHub Actions users write unquoted) is a tag on an
    /// empty value: one error, over the whole value, whose help quotes it, and the value
    /// read as that text, so its key's type check adds no `found null`.
    @Test func anUnquotedNegationIsATagWhoseHelpQuotesIt() throws {
        let text = "version: 1\nvars:\n  deploy: \"\"\nsteps:\n  - shell: echo hi\n    if: !vars.deploy\n  - print: !cancelled()\n"
        let loaded = LoadedWorkflow.load(SourceFile(path: "t.yaml", text: text))
        let errors = loaded.diagnostics.filter { $0.severity == .error }
        #expect(errors.map(Spot.init) == [Spot(.unsupportedTag, 6, 9), Spot(.unsupportedTag, 7, 12)], "\(errors)")
        #expect(errors.first?.help == "quote it to mean the text: `\"!vars.deploy\"`")
        #expect(errors.first?.span.end == FlowKit.SourceLocation(line: 6, column: 21))
        #expect(errors.last?.help == "quote it to mean the text: `\"!cancelled()\"`")
        // Another tool's tag on a value is still to be removed.
        let (_, other) = readYAML("a: !env NAME\n")
        #expect(other.first?.help == "flow reads plain YAML; remove the tag")
    }

    /// `if: !vars.a && vars.b`: after the tag the value starts with `&`, an anchor libyaml
    /// cannot read; the help names the `!` and says to quote the whole value.
    @Test func anAnchorAfterATagSaysToQuoteTheWholeValue() {
        let (_, diagnostics) = readYAML("steps:\n  - shell: x\n    if: !vars.a && vars.b\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.yamlSyntax, 3, 18)])
        #expect(diagnostics.first?.help?.contains("quote the whole value") == true, "\(diagnostics)")
    }

    @Test func mappingValueInPlainScalarIsASyntaxErrorAtTheColon() {
        let (_, diagnostics) = readYAML("steps:\n  - print: a: b\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.yamlSyntax, 2, 13)])
        #expect(diagnostics.first?.help != nil)
    }

    @Test func backtickIsASyntaxErrorAtTheBacktick() {
        let (_, diagnostics) = readYAML("steps:\n  - print: `x`\n")
        #expect(diagnostics.map(Spot.init) == [Spot(.yamlSyntax, 2, 12)])
    }

    @Test func unclosedFlowSequenceIsReportedInsideTheFile() throws {
        let file = SourceFile(path: "t.yaml", text: "steps: [a, b\n")
        let (_, diagnostics) = readYAML(file)
        let d = try #require(diagnostics.first)
        #expect(d.code == .yamlSyntax)
        #expect(d.span.start.line <= file.lineCount)
    }
}

/// A small deterministic generator, so the garbage tests are reproducible.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
