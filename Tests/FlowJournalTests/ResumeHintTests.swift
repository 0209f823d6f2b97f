@testable import FlowJournal
import Testing

/// The command the resume hint prints: ready to paste into a POSIX shell.
struct ResumeHintTests {
    @Test func theCommandNamesTheRunAndAGivenStateDirQuoted() {
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: nil).command == "flow resume 6b08eb29-a7fdd92e")
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: "").command == "flow resume 6b08eb29-a7fdd92e")
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: "ci/.flow").command
                    == "flow resume 6b08eb29-a7fdd92e --state-dir ci/.flow")
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: "it's $HOME").command
                    == #"flow resume 6b08eb29-a7fdd92e --state-dir 'it'\''s $HOME'"#)
    }

    /// No recorder (the run was not recorded), or a run that succeeded: no line.
    @Test func noLineWithoutARecorderOrOnSuccess() {
        let hint = ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: nil)
        #expect(hint.line(succeeded: false) == nil)
        #expect(hint.line(succeeded: true) == nil)
    }
}
