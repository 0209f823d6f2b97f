#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import FlowJournal
@testable import FlowKit

/// Commits off the hub's thread: what they take stays in the run's lock file until it is
/// in the database, and leaves the file once it is.
@Suite struct RecorderCommitTests {
    @Test func aBackgroundCommitLeavesInTheLockFileOnlyWhatItHasNotCommitted() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let (journal, plan, recorder, lockPath) = try Self.recording(steps: 4, in: dir)

        func run(_ index: Int, settle: Bool = true) {
            let step = StepRef(node: plan.root.children[index])
            recorder.handle(.stepState(StepTransition(step: step, from: .pending, to: .running, attempt: 1, time: .now())))
            recorder.handle(.stepState(StepTransition(step: step, from: .running, to: .succeeded, attempt: 1, exitCode: 0,
                                                      time: .now())))
            if settle { recorder.settle() }  // before the next step starts: the end is in the lock file
        }
        func logged() throws -> [Int] {
            TransitionRecord.parseLines(Array(try FileReader.read(lockPath))).map(\.seq)
        }

        run(0)
        #expect(try logged() == [1, 2])
        #expect(try RunLockLogTests.seqs(journal, "r1") == [])
        recorder.commitInBackground()
        #expect(try RunLockLogTests.seqs(journal, "r1") == [1, 2])
        #expect(try Self.tableStates(journal) == ["succeeded", "pending", "pending", "pending"], "`steps` follows each commit")
        #expect(try logged() == [1, 2], "emptied when the next end is written, not by the commit")
        run(1)
        #expect(try logged() == [3, 4], "what was committed is gone; the new end is there")
        run(2)
        #expect(try logged() == [3, 4, 5, 6])
        recorder.commitInBackground()
        #expect(try RunLockLogTests.seqs(journal, "r1") == [1, 2, 3, 4, 5, 6])
        // A few transitions no settle has written yet go into the file as the commit takes
        // them (what was committed leaves it first): no gap for a later line to follow.
        run(3, settle: false)
        recorder.commitInBackground()
        #expect(try RunLockLogTests.seqs(journal, "r1") == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(try logged() == [7, 8])
        recorder.settle()
        recorder.handle(.runFinished(RunOutcome(status: .succeeded, exitCode: 0, counts: [.succeeded: 4], elapsed: 0.1, time: .now())))
        #expect(access(lockPath, F_OK) != 0, "the finished run's lock file is removed")
        #expect(try journal.steps("r1").map(\.state) == ["succeeded", "succeeded", "succeeded", "succeeded"])
        #expect(try Self.tableStates(journal) == ["succeeded", "succeeded", "succeeded", "succeeded"])
        let attempts: [String] = try journal.read { db in try db.values("SELECT path FROM attempts WHERE run_id = 'r1' ORDER BY path") }
        #expect(attempts.count == 4, "one attempt row per step, each written once: \(attempts)")
    }

    /// `catchUp`, before a step's `running`, writes an end with large outputs to the lock
    /// file itself (the encoding was in the next step's time), and the settle before the
    /// spawn then still writes that step's start: a flow killed while the step ran leaves
    /// it `interrupted`, not `pending`. An end with small outputs is left to the settle,
    /// which writes it with the start in one `write`, as before.
    @Test func catchUpWritesALargeEndAndTheSettleStillWritesTheStart() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let (journal, plan, recorder, lockPath) = try Self.recording(steps: 3, in: dir)
        // Open to the end, as the recorder's journal is in a run.
        defer { withExtendedLifetime(journal) {} }
        func logged() throws -> [Int] {
            TransitionRecord.parseLines(Array(try FileReader.read(lockPath))).map(\.seq)
        }
        func step(_ index: Int) -> StepRef { StepRef(node: plan.root.children[index]) }
        func start(_ index: Int) {
            recorder.catchUp()
            recorder.handle(.stepState(StepTransition(step: step(index), from: .pending, to: .running, attempt: 1, time: .now())))
            recorder.settle()
        }
        func end(_ index: Int, value: String) {
            recorder.handle(.stepState(StepTransition(step: step(index), from: .running, to: .succeeded, attempt: 1, exitCode: 0,
                                                      time: .now(), outputs: ["v": value])))
        }

        start(0)
        #expect(try logged() == [], "a start alone is not written")
        end(0, value: "small")
        recorder.catchUp()
        #expect(try logged() == [], "a small end is left to the settle")
        recorder.handle(.stepState(StepTransition(step: step(1), from: .pending, to: .running, attempt: 1, time: .now())))
        recorder.settle()
        #expect(try logged() == [1, 2, 3], "the end and the next start, together")
        end(1, value: String(repeating: "x", count: JournalRecorder.largeOutputs))
        recorder.catchUp()
        #expect(try logged() == [1, 2, 3, 4], "the large end, before the next step's clock starts")
        recorder.handle(.stepState(StepTransition(step: step(2), from: .pending, to: .running, attempt: 1, time: .now())))
        recorder.settle()
        #expect(try logged() == [1, 2, 3, 4, 5], "the next step's start, before its spawn")
    }

    /// The `steps` table's states, as written (not replayed from the transitions).
    static func tableStates(_ journal: Journal) throws -> [String] {
        try journal.read { db in try db.values("SELECT state FROM steps WHERE run_id = 'r1' ORDER BY position") }
    }

    /// The run's end cancels the commit ticker however soon after the journal's opening it
    /// comes: the end, on another thread, may find the recorder attached the moment the
    /// opening says so. The ticker was made after that, so the end could read it still nil
    /// and leave it running (and the read and the write were a data race, which is how
    /// ThreadSanitizer found it). Here the end comes at that very moment, many times over:
    /// without the fix most of the runs' tickers stay uncancelled.
    @Test func theRunsEndRightAfterTheOpeningCancelsTheTicker() throws {
        let dir = JournalStorageTests.stateDir()
        defer { JournalStorageTests.removeStateDir(dir) }
        let plan = try Planner.plan(try #require(LoadedWorkflow.load(SourceFile(path: "wf.yaml", text: "steps:\n  - shell: a\n")).workflow))
        var uncancelled = 0
        for run in 0..<20 {
            let metadata = RunMetadata(id: "r\(run)", kind: .run, parentID: nil, workflowPath: "wf.yaml", content: [],
                                       args: RunArguments(PlanOptions()), cwd: "/")
            let recorder = JournalRecorder.opening(stateDir: dir, metadata: metadata, plan: plan, warn: { _ in },
                                                   failed: { Issue.record("the journal did not open: \($0)") })
            while !recorder.attached.load(ordering: .acquiring) { sched_yield() }
            recorder.handle(.runFinished(RunOutcome(status: .succeeded, exitCode: 0, counts: [.pending: 1], elapsed: 0, time: .now())))
            let ticker = recorder.mutex.withLock { _ in recorder.ticker }
            if ticker?.isCancelled != true { uncancelled += 1 }
            ticker?.cancel()
        }
        #expect(uncancelled == 0, "runs whose commit ticker the run's end did not cancel")
    }

    /// A journal in `dir` recording run `r1` of `steps` shell steps (`a`, `b`, …), begun,
    /// and the path of its lock file.
    static func recording(steps: Int, in dir: String) throws -> (Journal, Plan, JournalRecorder, String) {
        let journal = try Journal.open(stateDir: dir, create: true)
        let text = "steps:\n" + "abcdefgh".prefix(steps).map { "  - shell: \($0)\n" }.joined()
        let plan = try Planner.plan(try #require(LoadedWorkflow.load(SourceFile(path: "wf.yaml", text: text)).workflow))
        let metadata = RunMetadata(id: "r1", kind: .run, parentID: nil, workflowPath: "wf.yaml", content: [],
                                   args: RunArguments(PlanOptions()), cwd: "/")
        let recorder = JournalRecorder(journal: journal, metadata: metadata, plan: plan, warn: { _ in })
        try recorder.begin()
        return (journal, plan, recorder, RunLock.path(stateDir: journal.stateDir, runID: "r1"))
    }
}
