import Foundation
import Testing

/// Golden tests: one folder per case under Fixtures/, run through the built `flow` binary.
///
/// A case folder holds the workflow file(s) and
/// - `cmd`: the arguments of `flow`, one per line (paths relative to the folder, which is
///   the working directory);
/// - `stdout`, `stderr`, `status`: what flow must print and exit with;
/// - optionally `known-issue`: one line saying why the goldens (written by hand to the
///   correct behaviour) do not match yet; the mismatch is then a known issue.
///
/// `FLOW_RECORD=1 swift test --filter GoldenTests` re-records the goldens from the binary
/// (except those of known-issue cases). Read every recorded golden before committing it.
@Suite struct GoldenTests {
    static let fixtures = FlowBinary.packageRoot.appendingPathComponent("Tests/FlowEndToEndTests/Fixtures")

    static let cases: [String] = {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: fixtures.path)) ?? []
        return names.filter { FileManager.default.fileExists(atPath: fixtures.appendingPathComponent("\($0)/cmd").path) }.sorted()
    }()

    static var recording: Bool { ProcessInfo.processInfo.environment["FLOW_RECORD"] == "1" }

    @Test func fixturesExist() {
        #expect(Self.cases.count >= 30, "found only \(Self.cases) in \(Self.fixtures.path)")
    }

    @Test(arguments: cases)
    func golden(_ name: String) throws {
        let directory = Self.fixtures.appendingPathComponent(name)
        func read(_ file: String) -> String? {
            try? String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
        }
        let arguments = try #require(read("cmd")).split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
        let knownIssue = read("known-issue")?.trimmingCharacters(in: .whitespacesAndNewlines)
        let result = try FlowBinary.run(arguments, in: directory)

        if Self.recording, knownIssue == nil {
            try result.stdout.write(to: directory.appendingPathComponent("stdout"), atomically: true, encoding: .utf8)
            try result.stderr.write(to: directory.appendingPathComponent("stderr"), atomically: true, encoding: .utf8)
            try "\(result.status)\n".write(to: directory.appendingPathComponent("status"), atomically: true, encoding: .utf8)
            return
        }

        var mismatches: [String] = []
        let expectedStatus = read("status")?.trimmingCharacters(in: .whitespacesAndNewlines)
        if expectedStatus != "\(result.status)" {
            mismatches.append("status: expected \(expectedStatus ?? "<no golden>"), got \(result.status)")
        }
        for (stream, actual) in [("stdout", result.stdout), ("stderr", result.stderr)] {
            guard let expected = read(stream) else {
                mismatches.append("\(stream): no golden file; record with FLOW_RECORD=1")
                continue
            }
            if expected != actual {
                mismatches.append("\(stream) differs (- golden, + actual):\n" + LineDiff.render(expected: expected, actual: actual))
            }
        }
        let report = "flow \(arguments.joined(separator: " "))  [in Fixtures/\(name)]\n" + mismatches.joined(separator: "\n")
        if let knownIssue {
            withKnownIssue(Comment(rawValue: knownIssue)) {
                for mismatch in mismatches { Issue.record(Comment(rawValue: mismatch)) }
            }
        } else {
            for _ in mismatches.prefix(1) { Issue.record(Comment(rawValue: report)) }
        }
    }
}
