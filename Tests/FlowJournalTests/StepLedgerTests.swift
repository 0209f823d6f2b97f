import Testing
@testable import FlowJournal

/// The rules that turn a run's transitions into its steps' state and attempts.
@Suite struct StepLedgerTests {
    @Test func aStepThatSucceeds() {
        var ledger = StepLedger()
        ledger.apply(path: "1", to: "running", attempt: 1, time: 10, exitCode: nil, signal: nil)
        #expect(ledger.entries["1"] == StepLedger.Entry(state: "running", attempts: 1, startedAt: 10))
        ledger.apply(path: "1", to: "succeeded", attempt: 1, time: 12, exitCode: 0, signal: nil)
        #expect(ledger.entries["1"] == StepLedger.Entry(state: "succeeded", attempts: 1, exitCode: 0, startedAt: 10, endedAt: 12,
                                                        completedSeq: 1))
        #expect(ledger.attempts.count == 1)
        #expect(ledger.attempts[0].startedAt == 10 && ledger.attempts[0].endedAt == 12 && ledger.attempts[0].state == "succeeded")
    }

    /// Whether a step's failure was allowed is its latest transition's: nil while none of
    /// its transitions was one (its `steps` row is written as before), true after one, false
    /// once a later one (a retried group's next instance, here a skip, then a success) left it.
    @Test func anAllowedFailureLastsUntilTheStepsNextTransition() {
        var ledger = StepLedger()
        ledger.apply(path: "1", to: "running", attempt: 1, time: 1, exitCode: nil, signal: nil)
        ledger.apply(path: "1", to: "failed", attempt: 1, time: 2, exitCode: 3, signal: nil)
        #expect(ledger.entries["1"]?.allowedFailure == nil, "a failure that failed the run")
        ledger.apply(path: "2", to: "running", attempt: 1, time: 1, exitCode: nil, signal: nil)
        ledger.apply(path: "2", to: "timed_out", attempt: 1, time: 2, exitCode: nil, signal: 15, allowedFailure: true)
        #expect(ledger.entries["2"]?.allowedFailure == true && ledger.entries["2"]?.state == "timed_out")
        ledger.apply(path: "2", to: "skipped", attempt: 1, time: 3, exitCode: nil, signal: nil)
        #expect(ledger.entries["2"]?.allowedFailure == false, "the next instance of a retried group's step")
        ledger.apply(path: "2", to: "running", attempt: 1, time: 4, exitCode: nil, signal: nil)
        ledger.apply(path: "2", to: "failed", attempt: 1, time: 5, exitCode: 1, signal: nil, allowedFailure: true)
        ledger.apply(path: "2", to: "retrying", attempt: 1, time: 6, exitCode: nil, signal: nil)
        #expect(ledger.entries["2"]?.allowedFailure == false, "an allowed attempt's end, then a retry")
        ledger.apply(path: "2", to: "running", attempt: 2, time: 7, exitCode: nil, signal: nil)
        ledger.apply(path: "2", to: "succeeded", attempt: 2, time: 8, exitCode: 0, signal: nil)
        #expect(ledger.entries["2"]?.allowedFailure == false && ledger.entries["2"]?.state == "succeeded")
    }

    @Test func retriesMakeOneAttemptEachAndKeepTheFirstStart() {
        var ledger = StepLedger()
        ledger.apply(path: "2", to: "running", attempt: 1, time: 1, exitCode: nil, signal: nil)
        ledger.apply(path: "2", to: "failed", attempt: 1, time: 2, exitCode: 3, signal: nil)
        ledger.apply(path: "2", to: "retrying", attempt: 1, time: 3, exitCode: nil, signal: nil)
        #expect(ledger.entries["2"]?.endedAt == nil, "a retrying step has not ended")
        ledger.apply(path: "2", to: "running", attempt: 2, time: 4, exitCode: nil, signal: nil)
        ledger.apply(path: "2", to: "timed_out", attempt: 2, time: 6, exitCode: nil, signal: 15)
        let entry = ledger.entries["2"]
        #expect(entry?.state == "timed_out" && entry?.attempts == 2 && entry?.startedAt == 1 && entry?.endedAt == 6)
        #expect(entry?.completedSeq == nil)
        #expect(ledger.attempts.map(\.number) == [1, 2])
        #expect(ledger.attempts.map(\.state) == ["failed", "timed_out"])
        #expect(ledger.attempts[1].startedAt == 4 && ledger.attempts[1].signal == 15)
    }

    @Test func completionOrderIsTheOrderOfSucceeding() {
        var ledger = StepLedger()
        for path in ["a", "b", "c"] { ledger.apply(path: path, to: "running", attempt: 1, time: 1, exitCode: nil, signal: nil) }
        for path in ["c", "a", "b"] { ledger.apply(path: path, to: "succeeded", attempt: 1, time: 2, exitCode: 0, signal: nil) }
        #expect(ledger.entries["c"]?.completedSeq == 1 && ledger.entries["a"]?.completedSeq == 2 && ledger.entries["b"]?.completedSeq == 3)
    }

    @Test func skippedEndsTheStepWithoutAnAttempt() {
        var ledger = StepLedger()
        ledger.apply(path: "3", to: "skipped", attempt: 1, time: 5, exitCode: nil, signal: nil)
        #expect(ledger.entries["3"] == StepLedger.Entry(state: "skipped", endedAt: 5))
    }

    /// An undone step's times are those of its own run; the rollback that came later is not
    /// part of it (`flow show` would report the time until the rollback ended).
    @Test(arguments: ["undone", "undo_failed"])
    func rollbackKeepsTheStepsOwnEnd(_ end: String) {
        var ledger = StepLedger()
        ledger.apply(path: "4", to: "running", attempt: 1, time: 1, exitCode: nil, signal: nil)
        ledger.apply(path: "4", to: "succeeded", attempt: 1, time: 2, exitCode: 0, signal: nil)
        ledger.apply(path: "4", to: "undoing", attempt: 1, time: 3, exitCode: nil, signal: nil)
        #expect(ledger.entries["4"]?.state == "undoing" && ledger.entries["4"]?.endedAt == 2)
        ledger.apply(path: "4", to: end, attempt: 1, time: 9, exitCode: nil, signal: nil)
        #expect(ledger.entries["4"]?.state == end)
        #expect(ledger.entries["4"]?.startedAt == 1 && ledger.entries["4"]?.endedAt == 2)
        #expect(ledger.attempts.count == 1)
    }
}
