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
    /// `flow run` from a directory that was removed (`cd d && rmdir ../d && flow run …`)
    /// runs nothing and records nothing (exit 2), naming the cause: the steps ran in the
    /// removed directory (each shell said `getcwd() failed`) and the run was recorded as run
    /// in `.`, so `flow resume` ran them wherever it was invoked. A `resume` from there with
    /// a relative `--junit` is refused too (it would be taken from the run's directory).
    /// Found by the hostile-environment audit.
    @Test func aRunFromARemovedDirectoryIsRefused() throws {
        let box = try RunSandbox()
        let workflow = try box.write("wf.yaml", "steps:\n  - shell: test -f go\n")
        let script = "mkdir gone && cd gone && rmdir ../gone && exec \"$0\" \"$@\""
        let refused = try LiveFlow(executable: "/bin/sh", arguments: ["-c", script, RunSandbox.flowPath, "run", workflow],
                                   environment: box.environment, directory: box.root.path, ownGroup: false).finish(timeout: 60)
        #expect(refused.status == 2, "\(refused)")
        #expect(refused.stderr == "error: cannot tell the current directory (it was removed); cd to a directory that exists: "
                + "the steps would run in it; nothing was run\n", "\(refused)")
        #expect(!box.exists("state/journal.sqlite"), "nothing recorded: \(refused)")

        let failed = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(failed.status == 1, "\(failed)")
        let resumed = try LiveFlow(executable: "/bin/sh", arguments: ["-c", script, RunSandbox.flowPath, "resume", "last", "--junit", "r.xml"],
                                   environment: box.environment, directory: box.root.path, ownGroup: false).finish(timeout: 60)
        #expect(resumed.status == 2, "\(resumed)")
        #expect(resumed.stderr.contains("error: cannot tell the current directory (it was removed); cd to a directory that exists: "
                + "relative --state-dir and --junit paths are taken from it; nothing was run"), "\(resumed)")
        #expect(!box.exists("r.xml"), "\(resumed)")
    }

    /// A run started in a directory deeper than PATH_MAX (4,096 bytes: the system allows it)
    /// records that directory: flow asked for the name with a buffer of PATH_MAX, got
    /// ERANGE and recorded `.`, so a resume invoked elsewhere ran the steps there. Now the
    /// resume names the directory (which `chdir` cannot enter by that name) and runs nothing.
    @Test func aRunInADirectoryDeeperThanPathMaxRecordsIt() throws {
        let box = try RunSandbox()
        let workflow = try box.write("wf.yaml", "steps:\n  - shell: test -f go\n")
        let level = String(repeating: "d", count: 200)
        // The shell's `cd` cannot go there (it enters `$PWD/name`, too long); `env -C`,
        // one level each, enters the relative name. GNU `mkdir -p` makes it a level at a time.
        let levels = Array(repeating: level, count: 22)
        let script = "mkdir -p \(levels.joined(separator: "/")) && exec "
            + levels.map { "env -C \($0) " }.joined() + "\"$0\" \"$@\""
        let failed = try LiveFlow(executable: "/bin/sh", arguments: ["-c", script, RunSandbox.flowPath, "run", workflow],
                                  environment: box.environment, directory: box.root.path, ownGroup: false).finish(timeout: 60)
        #expect(failed.status == 1, "\(failed)")
        try box.write("go", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 2, "ran in the invoking directory, where `go` is: \(resumed)")
        #expect(resumed.stderr.contains("/\(level)/\(level), which is gone (File name too long); its steps would run there"), "\(resumed)")
        // Foundation cannot remove a tree this deep (the sandbox's own clean-up left it); rm can.
        let rm = Process()
        rm.executableURL = URL(fileURLWithPath: "/bin/rm")
        rm.arguments = ["-rf", box.path(level)]
        try rm.run()
        rm.waitUntilExit()
    }
}
