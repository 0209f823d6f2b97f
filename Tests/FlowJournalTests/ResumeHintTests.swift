@testable import FlowJournal
import Testing

/// The command the resume hint prints: ready to paste into a POSIX shell.
struct ResumeHintTests {
    @Test func theCommandNamesTheRunAndAGivenStateDirQuoted() {
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: nil, program: "flow").command == "flow resume 6b08eb29-a7fdd92e")
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: "", program: "flow").command == "flow resume 6b08eb29-a7fdd92e")
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: "ci/.flow", program: "flow").command
                    == "flow resume 6b08eb29-a7fdd92e --state-dir ci/.flow")
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: "it's $HOME", program: "flow").command
                    == #"flow resume 6b08eb29-a7fdd92e --state-dir 'it'\''s $HOME'"#)
    }

    /// A flow the shell would not find as `flow` is named by its path, quoted alike.
    @Test func aProgramPathIsQuotedLikeTheRest() {
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: nil, program: ".build/release/flow").command
                    == ".build/release/flow resume 6b08eb29-a7fdd92e")
        #expect(ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: nil, program: "/opt/my tools/flow").command
                    == "'/opt/my tools/flow' resume 6b08eb29-a7fdd92e")
    }

    /// No recorder (the run was not recorded), or a run that succeeded: no line.
    @Test func noLineWithoutARecorderOrOnSuccess() {
        let hint = ResumeHint(runID: "6b08eb29-a7fdd92e", stateDir: nil)
        #expect(hint.line(succeeded: false) == nil)
        #expect(hint.line(succeeded: true) == nil)
    }
}
