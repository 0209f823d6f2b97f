import FlowKit
import Testing
@testable import FlowJournal

/// The options a run records for its resumes and undos (`--no-rollback`, `--max-parallel`,
/// `--grace`): how they are kept in `args`, read back, and inherited.
@Suite struct RecordedOptionsTests {
    @Test func theyRoundTripThroughTheRecordedArguments() {
        var arguments = RunArguments(PlanOptions())
        arguments.options = RecordedOptions(rollback: false, maxParallel: 2, grace: "1m30s")
        #expect(arguments.json.contains(#""options":{"grace":"1m30s","max_parallel":2,"rollback":false}"#), "\(arguments.json)")
        #expect(RunArguments.decode(arguments.json) == arguments)
    }

    /// A run given none is recorded as every run was before flow kept them: an older flow
    /// reads it as it always did, and nothing says more than was given.
    @Test func aRunGivenNoneIsRecordedAsBefore() {
        #expect(RunArguments(PlanOptions()).json == #"{"skip_tags":[],"tags":[],"vars":[],"with":[]}"#)
        let old = RunArguments.decode(#"{"skip_tags":[],"tags":[],"vars":[],"with":[]}"#)
        #expect(old?.options == RecordedOptions())
    }

    /// One that is not what flow writes is damage, as for the other arguments: read as not
    /// given, `rollback: "off"` would have rolled back the resume of a `--no-rollback` run.
    @Test(arguments: [#"{"options":[]}"#, #"{"options":{"rollback":"off"}}"#, #"{"options":{"max_parallel":0}}"#,
                      #"{"options":{"max_parallel":1.5}}"#, #"{"options":{"grace":"soon"}}"#, #"{"options":{"grace":5}}"#])
    func damagedOptionsAreDamagedArguments(_ json: String) {
        #expect(RunArguments.decode(json) == nil, "\(json)")
    }

    /// What a resume gives overrides the run's; what it does not give is the run's.
    @Test func givenOptionsOverrideTheRunsAndTheRestAreInherited() {
        let run = RecordedOptions(rollback: false, maxParallel: 3, grace: "30s")
        #expect(RecordedOptions().inheriting(run) == run)
        #expect(RecordedOptions(rollback: true).inheriting(run) == RecordedOptions(rollback: true, maxParallel: 3, grace: "30s"))
        #expect(RecordedOptions(maxParallel: 8, grace: "1s").inheriting(run) == RecordedOptions(rollback: false, maxParallel: 8, grace: "1s"))
        #expect(RecordedOptions(grace: "1s").inheriting(RecordedOptions()) == RecordedOptions(grace: "1s"))
    }

    /// What a resume says it takes from the run: what it was not given itself.
    @Test func theRunsOptionsLeftByTheGivenOnesAreThoseNotGiven() {
        let run = RecordedOptions(rollback: false, maxParallel: 3, grace: "30s")
        #expect(run.left(by: RecordedOptions()) == run)
        #expect(run.left(by: RecordedOptions(rollback: true, grace: "1s")) == RecordedOptions(maxParallel: 3))
        #expect(RecordedOptions().left(by: RecordedOptions(maxParallel: 2)).isEmpty)
    }

    @Test func theyAreSaidAsCommandLineWords() {
        #expect(RecordedOptions().commandLine == "")
        #expect(RecordedOptions(rollback: true).commandLine == "", "rollback is on without a word")
        #expect(RecordedOptions(rollback: false, maxParallel: 2, grace: "30s").commandLine == "--no-rollback --max-parallel 2 --grace 30s")
    }
}
