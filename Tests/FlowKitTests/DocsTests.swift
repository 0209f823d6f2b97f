import Foundation
@testable import FlowKit
import Testing

/// Every diagnostic code is documented in docs/diagnostics.md under a `### <code>` heading.
@Suite struct DocsTests {
    static let diagnosticsDoc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/diagnostics.md")

    /// The text of every `### ` heading, without backticks.
    static func headings() throws -> Set<String> {
        let text = try String(contentsOf: diagnosticsDoc, encoding: .utf8)
        var result: Set<String> = []
        for line in text.split(separator: "\n") where line.hasPrefix("### ") {
            result.insert(line.dropFirst(4).filter { $0 != "`" }.trimmingCharacters(in: .whitespaces))
        }
        return result
    }

    @Test func docsFileExists() {
        #expect(FileManager.default.fileExists(atPath: Self.diagnosticsDoc.path), "missing \(Self.diagnosticsDoc.path)")
    }

    @Test(arguments: DiagnosticCode.allCases)
    func codeIsDocumented(code: DiagnosticCode) throws {
        let headings = try Self.headings()
        #expect(headings.contains(code.rawValue), "docs/diagnostics.md has no `### \(code.rawValue)` heading")
    }

    @Test func noStaleCodesAreDocumented() throws {
        let codes = Set(DiagnosticCode.allCases.map(\.rawValue))
        let stale = try Self.headings().filter { heading in
            heading.contains("-") && !heading.contains(" ") && !codes.contains(heading)
        }
        #expect(stale.isEmpty, "documented but not a DiagnosticCode: \(stale.sorted())")
    }

    /// Every environment variable flow reads (`getenv("NAME")` in Swift or C, a child's
    /// `environment["NAME"]`) is named in README.md or docs/: a variable that changes what
    /// flow does must not be found only by reading the code.
    @Test func everyEnvironmentVariableReadIsDocumented() throws {
        let root = Self.diagnosticsDoc.deletingLastPathComponent().deletingLastPathComponent()
        var docs = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        for name in try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
        where name.hasSuffix(".md") {
            docs += try String(contentsOf: root.appendingPathComponent("docs/\(name)"), encoding: .utf8)
        }
        var read: [String: String] = [:]
        let sources = root.appendingPathComponent("Sources")
        let files = FileManager.default.enumerator(atPath: sources.path)?.compactMap { $0 as? String } ?? []
        #expect(!files.isEmpty)
        for file in files where file.hasSuffix(".swift") || file.hasSuffix(".c") {
            let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
            for pattern in [#"getenv\("([A-Z_][A-Z0-9_]*)"\)"#, #"[eE]nvironment\["([A-Z_][A-Z0-9_]*)"\]"#] {
                let regex = try NSRegularExpression(pattern: pattern)
                for match in regex.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    if let range = Range(match.range(at: 1), in: text) { read[String(text[range])] = file }
                }
            }
        }
        #expect(read.count >= 5, "found only \(read.keys.sorted())")
        for (name, file) in read.sorted(by: { $0.key < $1.key }) {
            #expect(docs.contains("`\(name)") || docs.contains("$\(name)"),
                    "Sources/\(file) reads $\(name), which neither README.md nor docs/ mentions")
        }
    }
}
