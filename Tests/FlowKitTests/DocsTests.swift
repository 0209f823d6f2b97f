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
}
