import FlowKit
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import FlowJournal

/// `flow runs --prune` that takes a while says how far it got, on a terminal only.
///
/// A prune of three runs is quick; to make it last, the test holds the journal's write
/// lock (`BEGIN IMMEDIATE`) while flow waits to delete (SQLite's busy timeout): once the
/// runs' claim files exist, flow has started its prune and waits for the lock, so holding it
/// `ProgressLine.defaultDelay` and a half longer makes the prune last longer than the delay,
/// whatever the machine's speed (a wait that guarantees the condition, not one that hopes).
@Suite struct PruneProgressTests {
    /// A sandbox with three runs recorded.
    static func sandboxWithRuns() throws -> RunSandbox {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - print: hi\n")
        for _ in 0..<3 { #expect(try box.run(["run", "wf.yaml"]).status == 0) }
        return box
    }

    /// Whether flow has claimed runs to delete them.
    static func claimed(_ box: RunSandbox) -> Bool {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: box.state.path + "/locks")) ?? []
        return names.contains { $0.hasSuffix(".claim") }
    }

    /// Holds the journal's write lock until `started` says flow is waiting for it, and the
    /// delay and a half more.
    static func holdingTheJournal(_ box: RunSandbox, until started: () -> Bool) throws {
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute("BEGIN IMMEDIATE")
        defer { try? db.execute("ROLLBACK") }
        #expect(started(), "flow never claimed the runs")
        usleep(useconds_t((ProgressLine.defaultDelay + 0.5) * 1_000_000))
    }

    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func aLongPruneShowsHowFarItGotOnATerminal() throws {
        let box = try Self.sandboxWithRuns()
        var prune: TerminalRun?
        try Self.holdingTheJournal(box) {
            prune = try? TerminalRun(box, ["runs", "--prune", "0"], rows: 10, columns: 80)
            return prune?.waitFor { _ in Self.claimed(box) } ?? false
        }
        let run = try #require(prune)
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.text.contains("\rdeleting runs… 3 of 3\u{1B}[K"), "\(run.text.debugDescription)")
        // Erased before the summary: only the summary stays on the screen.
        #expect(run.screen.all == ["pruned 3 runs"], "\(run.report)")
        #expect(run.screen.foreign.isEmpty, "\(run.report)")
    }

    /// On a terminal narrower than the line, it is cut to fit: wrapped, its first row stayed
    /// on screen after it was erased (`\r` goes back to the start of the last row only).
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func aLongPruneOnANarrowTerminalLeavesOnlyItsSummary() throws {
        let box = try Self.sandboxWithRuns()
        var prune: TerminalRun?
        try Self.holdingTheJournal(box) {
            prune = try? TerminalRun(box, ["runs", "--prune", "0"], rows: 10, columns: 18)
            return prune?.waitFor { _ in Self.claimed(box) } ?? false
        }
        let run = try #require(prune)
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.text.contains("\rdeleting runs… 3…\u{1B}[K"), "\(run.text.debugDescription)")
        #expect(run.screen.all == ["pruned 3 runs"], "\(run.report)")
    }

    @Test func aLongPruneWritesNoProgressWhereStderrIsNoTerminal() throws {
        let box = try Self.sandboxWithRuns()
        var prune: LiveFlow?
        try Self.holdingTheJournal(box) {
            prune = try? box.start(["runs", "--prune", "0"])
            let deadline = Date().addingTimeInterval(30)
            while !Self.claimed(box), Date() < deadline { usleep(5_000) }
            return Self.claimed(box)
        }
        let outcome = try #require(prune).finish(timeout: 60)
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout == "pruned 3 runs\n")
        #expect(outcome.stderr == "", "\(outcome)")
    }

    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func aLongPruneWithJSONWritesNoProgressOnATerminal() throws {
        let box = try Self.sandboxWithRuns()
        var prune: TerminalRun?
        try Self.holdingTheJournal(box) {
            prune = try? TerminalRun(box, ["runs", "--prune", "0", "--json"], rows: 10, columns: 80)
            return prune?.waitFor { _ in Self.claimed(box) } ?? false
        }
        let run = try #require(prune)
        #expect(run.finish() == 0, "\(run.report)")
        #expect(run.text == "{\r\n  \"pruned\": 3\r\n}\r\n", "\(run.text.debugDescription)")
    }
}
