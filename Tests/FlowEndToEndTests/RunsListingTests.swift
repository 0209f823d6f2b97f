import Foundation
import Testing
@testable import FlowJournal

/// `flow runs` of a history longer than the page the journal reads at a time
/// (`Journal.listingPage`): written as read, laid out as if read whole.
@Suite struct RunsListingTests {
    /// A journal of one real run and `count` more inserted, the oldest named `a-long-name-…`:
    /// the widest WORKFLOW cell is in the last page.
    static func sandbox(runs count: Int) throws -> RunSandbox {
        let box = try RunSandbox()
        try box.write("wf.yaml", "name: wf\nsteps:\n  - print: hi\n")
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.transaction {
            for i in 0..<count {
                let id = String(format: "00000000-%08x", i)
                try db.execute("""
                    INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at,
                                      state, pid, host)
                    VALUES (?, 'run', 'w.yml', ?, 'h', x'', '{}', '/', ?, 'running', 1, 'host')
                    """, [id, i == 0 ? "a-long-name-in-the-last-page" : "w", 1_000_000 + Double(i)])
                try db.execute("INSERT INTO steps (run_id, path, position, depth, kind, label, state) VALUES (?, '1', 0, 0, 'shell', 's', ?)",
                               [id, i % 2 == 0 ? "succeeded" : "failed"])
                try db.execute("UPDATE runs SET state = ?, ended_at = started_at + 2 WHERE id = ?", [i % 2 == 0 ? "succeeded" : "failed", id])
            }
        }
        return box
    }

    @Test func theListingIsLaidOutOverEveryPage() throws {
        let count = Journal.listingPage * 2 + 3
        let box = try Self.sandbox(runs: count)
        let r = try box.run(["runs"])
        #expect(r.status == 0, "\(r)")
        let lines = r.stdoutLines
        #expect(lines.count == count + 2, "a header and every run")
        // Every row's STEPS starts in the header's column, which the widest WORKFLOW (the
        // oldest run, read last) pushed right: each page was laid out with the others.
        let column = try #require(lines.first?.range(of: "STEPS")).lowerBound.utf16Offset(in: lines[0])
        #expect(lines[0].range(of: "WORKFLOW")!.lowerBound.utf16Offset(in: lines[0]) + "a-long-name-in-the-last-page  ".count == column)
        for line in lines.dropFirst() {
            let steps = line.range(of: #"1 (succeeded|failed)$"#, options: .regularExpression)
            #expect(steps?.lowerBound.utf16Offset(in: line) == column, "\(line)")
        }
        #expect(lines.last?.hasPrefix("00000000-00000000  succeeded") == true)
        #expect(lines.dropFirst(2).prefix(3).map { String($0.prefix(17)) }
                == ["00000000-" + String(format: "%08x", count - 1), "00000000-" + String(format: "%08x", count - 2),
                    "00000000-" + String(format: "%08x", count - 3)], "newest first")

        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.count == count + 1)
        #expect(runs.dropFirst().map { $0["id"] as? String } == (0..<count).reversed().map { String(format: "00000000-%08x", $0) })
        #expect(runs.last?["counts"] as? [String: Int] == ["succeeded": 1])
        #expect(runs.dropFirst().first?["counts"] as? [String: Int] == [count % 2 == 0 ? "failed" : "succeeded": 1])
    }
}
