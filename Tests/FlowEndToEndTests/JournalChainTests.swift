import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A run carried on by several resumes, as a CI operator meets it: run, fix, resume, fail
/// again, resume again, then undo. What `resume` and `undo` say of the chain.
@Suite struct JournalChainTests {
    static let workflow = """
        steps:
          - { name: a, shell: "true", undo: "true" }
          - { name: b, shell: test -f ok1, undo: "true" }
          - { name: c, shell: test -f ok2, undo: "true" }
        """

    /// The newest run's id.
    static func lastID(_ box: RunSandbox, sourceLocation: SourceLocation = #_sourceLocation) throws -> String {
        try #require(try JournalEndToEndTests.runs(box, sourceLocation: sourceLocation).first?["id"] as? String,
                     sourceLocation: sourceLocation)
    }

    /// `flow undo` of a resume records each step it reverses as having succeeded in the run
    /// that ran it, as the resume said of the steps it reused (`reused from run ID`): it
    /// said the resume's id of a step the resume only took from an earlier run.
    @Test func undoOfAResumeNamesTheRunThatRanEachStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let first = try Self.lastID(box)
        try box.write("ok1", "")
        #expect(try box.run(["resume", "last"]).status == 1)
        let second = try Self.lastID(box)
        try box.write("ok2", "")
        let third = try box.run(["resume", "last"])
        #expect(third.status == 0, "\(third)")
        #expect(third.stderrLines.contains("✓ a reused from run \(first)"), "\(third)")
        #expect(third.stderrLines.contains("✓ b reused from run \(second)"), "\(third)")
        let thirdID = try Self.lastID(box)
        let undo = try box.run(["undo", "last"])
        #expect(undo.status == 0, "\(undo)")
        #expect(undo.stderrLines.contains("✓ a succeeded in run \(first)"), "\(undo)")
        #expect(undo.stderrLines.contains("✓ b succeeded in run \(second)"), "\(undo)")
        #expect(undo.stderrLines.contains("✓ c succeeded in run \(thirdID)"), "\(undo)")
    }

    /// `runs --prune` keeps a run a kept resume carries on: a step the resume never got to
    /// (here `b`: the resume was killed while `a`, edited, ran again before it) is read from
    /// the run it resumed, and once that run was pruned the next resume ran `b` again.
    @Test func pruneKeepsTheRunAKeptResumeCarriesOn() throws {
        let box = try RunSandbox()
        let workflow = """
            steps:
              - { name: a, shell: "true", undo: "true" }
              - { name: b, shell: echo ran >> b.log, undo: "true" }
              - { name: c, shell: test -f ok, undo: "true" }
            """
        try box.write("wf.yaml", workflow)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let first = try Self.lastID(box)
        try box.write("wf.yaml", workflow.replacingOccurrences(of: #"name: a, shell: "true""#, with: "name: a, shell: echo started; exec sleep 30"))
        let killed = try box.start(["resume", "last", "--force", "--output", "prefixed"])
        #expect(killed.waitForLine("a | started"), "\(killed.stderr)")
        killed.signal(SIGKILL)
        _ = try killed.finish()
        let pruned = try box.run(["runs", "--prune", "1"])
        #expect(pruned.status == 0, "\(pruned)")
        #expect(pruned.stdout == "pruned 0 runs\n", "\(pruned)")
        #expect(pruned.stderr == "note: kept 1 older run that a kept `flow resume` carries on "
                + "(the steps it did not get to are read from it)\n", "\(pruned)")
        try box.write("wf.yaml", workflow)
        try box.write("ok", "")
        let resumed = try box.run(["resume", "last", "--force"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderrLines.contains("✓ b reused from run \(first)"), "\(resumed)")
        #expect(box.read("b.log") == "ran\n", "b ran once, in the first run")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// `flow show` of a run says which runs carried it on (its resumes and undos, oldest
    /// first, with their states): its own steps say `failed`, while its story went on there.
    @Test func showSaysWhichRunsCarriedARunOn() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let first = try Self.lastID(box)
        #expect(try !box.run(["show", first]).stdout.contains("carried on"), "nothing carried it on yet")
        try box.write("ok1", "")
        try box.write("ok2", "")
        #expect(try box.run(["resume", "last"]).status == 0)
        let second = try Self.lastID(box)
        #expect(try box.run(["undo", second]).status == 0)
        let undo = try Self.lastID(box)
        let shown = try box.run(["show", first])
        #expect(shown.stdout.split(separator: "\n")[2] == "carried on: resumed as run \(second) (succeeded)", "\(shown)")
        let resumed = try box.run(["show", second])
        #expect(resumed.stdout.contains("\ncarried on: undone by run \(undo) (succeeded)\n"), "\(resumed)")
        let json = try JSONSerialization.jsonObject(with: Data(try box.run(["show", second, "--json"]).stdout.utf8)) as? [String: Any]
        let later = json?["later_runs"] as? [[String: String]]
        #expect(later == [["id": undo, "kind": "undo", "state": "succeeded"]], "\(String(describing: json))")
    }

    /// A run resumed more than once is resumed and undone through its latest resume, and the
    /// refusal names that one: it named the first resume, whose own refusal named the next.
    @Test func aRunResumedTwiceIsReferredToItsLatestResume() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let first = try Self.lastID(box)
        #expect(try box.run(["resume", "last"]).status == 1)
        let second = try Self.lastID(box)
        // One resume: said as before.
        let once = try box.run(["undo", first])
        #expect(once.status == 2, "\(once)")
        #expect(once.stderrLines == ["error: run \(first) was resumed as run \(second) (failed), which carries its steps on; "
                                     + "undo that run instead", "help: flow undo \(second)"], "\(once)")
        #expect(try box.run(["resume", "last"]).status == 1)
        let third = try Self.lastID(box)
        for command in ["resume", "undo"] {
            let refused = try box.run([command, first])
            #expect(refused.status == 2, "\(refused)")
            #expect(refused.stderrLines == [
                "error: run \(first) was resumed as run \(second), then as run \(third) (failed), which carries its steps on; "
                    + "\(command) that run instead",
                "help: flow \(command) \(third)",
            ], "\(refused)")
        }
        try box.write("ok1", "")
        try box.write("ok2", "")
        #expect(try box.run(["resume", third]).status == 0)
        let fourth = try Self.lastID(box)
        let done = try box.run(["resume", first])
        #expect(done.status == 2, "\(done)")
        #expect(done.stderrLines == [
            "error: run \(first) was resumed as run \(second), then as run \(third), then as run \(fourth), which succeeded; "
                + "there is nothing left to resume",
        ], "\(done)")
        let undo = try box.run(["undo", second])
        #expect(undo.status == 2, "\(undo)")
        #expect(undo.stderrLines.last == "help: flow undo \(fourth)", "\(undo)")
    }

    static let groupUndo = """
        steps:
          - name: g
            sequential:
              - { name: make, shell: echo made > thing }
            undo: rm thing
          - { name: use, shell: cat thing && test -f ok }
        """

    /// A step inside a group whose `undo` the run's rollback ran is not reused by a resume:
    /// the group's undo reversed what it did (it was reused, and `use` found nothing).
    @Test func aStepInsideAGroupTheRollbackReversedRunsAgainOnResume() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.groupUndo)
        let run = try box.run(["run", "wf.yaml"])
        #expect(run.status == 1, "\(run)")
        #expect(!FileManager.default.fileExists(atPath: box.path("thing")), "rolled back: \(run)")
        let first = try Self.lastID(box)
        try box.write("ok", "")
        let resumed = try box.run(["resume", "last"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderrLines.first == "resuming run \(first): 0 steps already succeeded", "\(resumed)")
        #expect(!resumed.stderr.contains("reused from run"), "\(resumed)")
        #expect(FileManager.default.fileExists(atPath: box.path("thing")), "\(resumed)")
    }

    /// So is one inside a group a `flow undo` of the run reversed.
    @Test func aStepInsideAGroupFlowUndoReversedRunsAgainOnResume() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.groupUndo)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let first = try Self.lastID(box)
        let undo = try box.run(["undo", first])
        #expect(undo.status == 0, "\(undo)")
        #expect(!FileManager.default.fileExists(atPath: box.path("thing")), "\(undo)")
        try box.write("ok", "")
        let resumed = try box.run(["resume", first])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(!resumed.stderr.contains("reused from run"), "\(resumed)")
        #expect(FileManager.default.fileExists(atPath: box.path("thing")), "\(resumed)")
    }

    /// The note's command keeps the `--state-dir` `flow logs` was given: pasted, it looked
    /// for the run in the default journal.
    @Test func theReusedStepsNoteNamesACommandThatWorksAsPasted() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: echo made a }
              - { name: b, shell: test -f ok && echo made b }
            """)
        #expect(try box.run(["run", "wf.yaml", "--state-dir", "mine"]).status == 1)
        try box.write("ok", "")
        #expect(try box.run(["resume", "last", "--state-dir", "mine"]).status == 0)
        let reused = try box.run(["logs", "last", "a", "--state-dir", "mine"])
        let line = try #require(reused.stderrLines.first, "\(reused)")
        let command = try #require(line.split(separator: "(").last.map { String($0.dropLast()) }, "\(reused)")
        #expect(command.hasPrefix("flow logs ") && command.hasSuffix(" a --state-dir mine"), "\(reused)")
        let pasted = try FlowBinary.run([], in: box.root, shellScript: "\"$0\" " + command.dropFirst("flow ".count))
        #expect(pasted.stdout.contains("made a"), "\(pasted)")
    }

    /// `flow logs` of a step a resume reused printed nothing, exit 0, with nothing to say
    /// why: a note names the run that ran it, which has its output.
    @Test func logsOfAReusedStepNameTheRunThatHasItsOutput() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: echo made a, undo: "true" }
              - { name: b, shell: test -f ok && echo made b }
            """)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let first = try Self.lastID(box)
        try box.write("ok", "")
        #expect(try box.run(["resume", "last"]).status == 0)
        let second = try Self.lastID(box)
        let reused = try box.run(["logs", second, "a"])
        #expect(reused.status == 0 && reused.stdout.isEmpty, "\(reused)")
        #expect(reused.stderrLines == ["note: a did not run in run \(second): it was reused from run \(first), "
                                       + "which has its output (flow logs \(first) a)"], "\(reused)")
        let there = try box.run(["logs", first, "a"])
        #expect(there.status == 0 && there.stdout.contains("made a"), "\(there)")
        // A step the resume ran: its own output, no note.
        let ran = try box.run(["logs", second, "b"])
        #expect(ran.status == 0 && ran.stdout == "made b\n" && ran.stderr.isEmpty, "\(ran)")
    }
}
