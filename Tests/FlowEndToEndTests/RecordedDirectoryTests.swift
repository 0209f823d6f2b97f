import Foundation
import Testing

/// `resume` and `undo` run the steps in the directory the run was started in (its `cwd` in
/// the journal), wherever they are invoked from.
@Suite struct RecordedDirectoryTests {
    static let workflow = """
        steps:
          - name: write
            shell: echo "wrote $(basename "$PWD")" >> out.log
            undo:
              shell: echo undone >> out.log
          - name: gate
            shell: test -f go
        """

    @Test func resumeAndUndoFromAnotherDirectoryRunWhereTheRunRan() throws {
        let box = try RunSandbox()
        try box.write("project/wf.yaml", Self.workflow)
        try box.write("elsewhere/.keep", "")
        let first = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"], in: "project")
        #expect(first.status == 1, "\(first)")
        try box.write("project/go", "")
        // A relative --state-dir is from where resume is invoked, as for every command.
        let resumed = try box.run(["resume", "last", "--output", "prefixed", "--state-dir", "../state",
                                   "--junit", "report.xml"], in: "elsewhere")
        #expect(resumed.status == 0, "\(resumed)")
        #expect(box.lines("project/out.log") == ["wrote project"], "write was reused, not run again: \(resumed)")
        #expect(box.exists("elsewhere/report.xml"), "the JUnit file is where it was asked for")
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.map { $0["kind"] as? String } == ["resume", "run"], "recorded in the same journal: \(runs)")

        let undo = try box.run(["undo", "last", "--output", "prefixed"], in: "elsewhere")
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("project/out.log") == ["wrote project", "undone"], "\(undo)")
        #expect(!box.exists("elsewhere/out.log"), "nothing ran in the invoking directory")
    }

    @Test func aStepThatRunsAgainRunsInTheRecordedDirectory() throws {
        let box = try RunSandbox()
        try box.write("project/wf.yaml", """
            steps:
              - name: gate
                shell: test -f go
              - name: after
                shell: echo "after in $(basename "$PWD")" >> out.log
            """)
        try box.write("elsewhere/.keep", "")
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"], in: "project").status == 1)
        try box.write("project/go", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"], in: "elsewhere")
        #expect(resumed.status == 0, "\(resumed)")
        #expect(box.lines("project/out.log") == ["after in project"], "\(resumed)")
        #expect(!box.exists("elsewhere/out.log"))
    }

    @Test(arguments: ["resume", "undo"])
    func aRecordedDirectoryThatIsGoneIsAnError(_ command: String) throws {
        let box = try RunSandbox()
        try box.write("project/wf.yaml", Self.workflow)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"], in: "project").status == 1)
        try FileManager.default.removeItem(atPath: box.path("project"))
        let r = try box.run([command, "last", "--output", "prefixed", "--force"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.contains(box.path("project")) && r.stderr.contains("gone"), "\(r)")
        #expect(!box.exists("out.log"), "nothing ran")
        #expect(try JournalEndToEndTests.runs(box).count == 1, "no new run")
    }
}
