import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import FlowJournal

/// `Journal.writeRunTable`: the table `flow runs` prints, laid out from one read of the
/// journal while runs start and end beside it.
@Suite struct RunTableTests {
    /// A run that starts while the table is read is not in it, and with a limit the rows
    /// are the runs whose cells were measured, each in line. The table used to read the
    /// journal twice (measuring, then writing): the second read listed the newcomer, which
    /// the first had not measured (its long name pushed its row out of line), and dropped
    /// the oldest of the runs measured.
    @Test func aRunThatStartsWhileTheTableIsReadIsNotInIt() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let journal = try Journal.open(stateDir: dir, create: true)
        try journal.write { db in
            for i in 1...5 {
                try RunCountsTests.insertRun(db, id: "run-\(i)", started: Double(i), steps: [], end: "succeeded")
            }
        }
        // Another process's run, started once the table has read its first run.
        let other = try SQLiteConnection(path: dir + "/journal.sqlite")
        var measured: [String] = []
        var lines: [String] = []
        let count = try journal.writeRunTable(limit: 3, header: ["ID", "WORKFLOW", "STATE"], cells: { run in
            if measured.isEmpty {
                do {
                    try RunCountsTests.insertRun(other, id: "newcomer", started: 100, steps: [], end: "succeeded")
                    try other.execute("UPDATE runs SET workflow_name = 'a-workflow-with-a-long-name' WHERE id = 'newcomer'")
                } catch {
                    Issue.record("\(error)")
                }
            }
            measured.append(run.id)
            return [run.id, run.workflowName, run.state]
        }, write: { lines.append($0) })
        #expect(count == 3)
        #expect(lines.map { String($0.prefix { $0 != " " }) } == ["ID", "run-5", "run-4", "run-3"], "\(lines)")
        #expect(Set(measured) == ["run-5", "run-4", "run-3"])
        let column = try #require(lines.first?.range(of: "STATE")).lowerBound.utf16Offset(in: lines[0])
        for line in lines.dropFirst() {
            #expect(line.range(of: "succeeded")?.lowerBound.utf16Offset(in: line) == column, "\(line)")
        }
        // The newcomer is in the journal, for the next listing.
        var next: [String] = []
        try journal.forEachRun(limit: 1) { next.append($0.id) }
        #expect(next == ["newcomer"])
    }
}
