import FlowKit
import Foundation
import Testing

/// The fuzzer's corpus (Fixtures/fuzz-corpus: small hostile inputs, see Tests/fuzz) replayed
/// through the built binary: on each file `validate` behaves like a compiler, in every
/// format. The long fuzz run itself is not part of the test suite.
@Suite struct FuzzCorpusTests {
    static let corpus = FlowBinary.packageRoot.appendingPathComponent("Tests/FlowEndToEndTests/Fixtures/fuzz-corpus")

    static let files: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: corpus.path)) ?? []
        return names.filter { $0.hasSuffix(".yaml") }.sorted()
    }()

    static let traps = ["Fatal error", "Stack dump", "Illegal instruction", "Segmentation fault", "Current stack trace"]

    @Test func corpusExists() {
        #expect(Self.files.count >= 10, "found only \(Self.files) in \(Self.corpus.path)")
    }

    /// Exit 0 or 1; no trap; JSON that parses, with every position inside the file; text
    /// whose every diagnostic shows its line; as many diagnostics in each format.
    @Test(arguments: files)
    func validateBehavesLikeACompiler(_ name: String) throws {
        let bytes = try [UInt8](Data(contentsOf: Self.corpus.appendingPathComponent(name)))
        let source = SourceFile(path: name, bytes: bytes)
        let lastLine = max(source.lineCount, 1)
        func columns(_ line: Int) -> Int { String(decoding: source.lineBytes(line), as: UTF8.self).unicodeScalars.count }

        let text = try FlowBinary.run(["validate", name], in: Self.corpus)
        let json = try FlowBinary.run(["validate", "--format", "json", name], in: Self.corpus)
        let github = try FlowBinary.run(["validate", "--format", "github", name], in: Self.corpus)
        for result in [text, json, github] {
            #expect([0, 1].contains(result.status), "\(name): \(result)")
            #expect(!Self.traps.contains { result.stdout.contains($0) || result.stderr.contains($0) }, "\(name): \(result)")
        }

        let parsed = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8))
        let diagnostics = try #require(parsed as? [[String: Any]], "\(name): \(json.stdout)")
        for d in diagnostics {
            let line = try #require(d["line"] as? Int), column = try #require(d["column"] as? Int)
            let endLine = try #require(d["end_line"] as? Int), endColumn = try #require(d["end_column"] as? Int)
            #expect((1...lastLine).contains(line) && (1...columns(line) + 1).contains(column), "\(name): \(d)")
            // Exclusive; a point just past a line's end (a value missing there) is one column wide.
            #expect((line...lastLine).contains(endLine) && (1...columns(endLine) + 2).contains(endColumn), "\(name): \(d)")
        }
        let headers = text.stderr.split(separator: "\n").filter { $0.hasPrefix("\(name):") && !$0.contains(": note: ") }
        #expect(headers.count == diagnostics.count, "\(name): \(text.stderr)")
        #expect(github.stdout.split(separator: "\n").count == diagnostics.count, "\(name): \(github.stdout)")
        for d in diagnostics {
            let line = try #require(d["line"] as? Int)
            #expect(text.stderr.contains("\n\(line) | "), "\(name): no excerpt of line \(line): \(text.stderr)")
        }
    }
}
