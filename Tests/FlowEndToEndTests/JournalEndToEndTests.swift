import CFlowSQLite
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import FlowJournal

/// The journal through the binary: `runs`, `show`, `logs`, `resume`, `undo`, crashes,
/// concurrency, damaged and unwritable state dirs.
@Suite struct JournalEndToEndTests {
    /// `flow runs --json`, parsed (newest first).
    static func runs(_ box: RunSandbox, sourceLocation: SourceLocation = #_sourceLocation) throws -> [[String: Any]] {
        let r = try box.run(["runs", "--json"])
        #expect(r.status == 0, "\(r)", sourceLocation: sourceLocation)
        let list = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]]
        return try #require(list, "flow runs --json is a JSON array: \(r)", sourceLocation: sourceLocation)
    }

    /// `flow show RUN --json`, parsed.
    static func show(_ box: RunSandbox, _ run: String = "last", sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: Any] {
        let r = try box.run(["show", run, "--json"])
        #expect(r.status == 0, "\(r)", sourceLocation: sourceLocation)
        let object = try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any]
        return try #require(object, "flow show --json is a JSON object: \(r)", sourceLocation: sourceLocation)
    }

    /// The step named `name` of a `show --json` object.
    static func step(named name: String, in run: [String: Any]) -> [String: Any]? {
        ((run["steps"] as? [[String: Any]]) ?? []).first { $0["name"] as? String == name }
    }

    static func stepStates(_ run: [String: Any]) -> [String: String] {
        var states: [String: String] = [:]
        for step in (run["steps"] as? [[String: Any]]) ?? [] {
            if let name = step["name"] as? String { states[name] = step["state"] as? String }
        }
        return states
    }

    static let demo = """
        name: demo
        steps:
          - name: build
            shell: echo building; echo warn >&2
          - name: test
            shell: echo "1 test failed" >&2; exit 3
          - name: ship
            shell: echo never
        finally:
          - print: "demo ${{ run.status }}"
        """

    @Test func historyAfterSuccessAndFailure() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "name: ok\nsteps:\n  - name: one\n    shell: echo one\n")
        try box.write("demo.yaml", Self.demo)
        #expect(try box.run(["run", "ok.yaml", "--output", "prefixed"]).status == 0)
        #expect(try box.run(["run", "demo.yaml", "--output", "prefixed"]).status == 1)
        let runs = try Self.runs(box)
        #expect(runs.count == 2)
        #expect(runs.map { $0["workflow"] as? String } == ["demo", "ok"], "newest first")
        #expect(runs.map { $0["state"] as? String } == ["failed", "succeeded"])
        #expect(runs.map { $0["exit_status"] as? Int } == [1, 0])
        #expect(runs.allSatisfy { $0["kind"] as? String == "run" })
        let counts = runs.first?["counts"] as? [String: Int]
        #expect(counts?["failed"] == 1 && counts?["skipped"] == 1, "\(String(describing: counts))")
        let table = try box.run(["runs"])
        #expect(table.status == 0)
        #expect(table.stdout.contains("failed") && table.stdout.contains("succeeded"), "\(table)")
    }

    /// The rule the journal keeps: a step's end is recorded before the next step starts.
    /// The second step reads the live run through another `flow` process.
    /// `.flow/` showed up in `git status`: a state dir flow creates gets a `.gitignore`
    /// holding `*`; one that was there (or a `.gitignore` removed from it) is left alone.
    @Test func aStateDirFlowCreatesIsIgnoredByGit() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "name: ok\nsteps:\n  - print: hi\n")
        #expect(try box.run(["run", "ok.yaml"], env: ["FLOW_STATE_DIR": ""]).status == 0)
        #expect(box.lines(".flow/.gitignore").last == "*", "\(box.read(".flow/.gitignore") ?? "no .flow/.gitignore")")
        #expect(try box.run(["run", "ok.yaml", "--state-dir", "deep/er/state"]).status == 0)
        #expect(box.lines("deep/er/state/.gitignore").last == "*", "the state dir itself, made with the ones above it")
        #expect(!box.exists("deep/.gitignore") && !box.exists("deep/er/.gitignore"), "only the state dir gets one")

        try FileManager.default.removeItem(atPath: box.path(".flow/.gitignore"))
        #expect(try box.run(["run", "ok.yaml"], env: ["FLOW_STATE_DIR": ""]).status == 0)
        #expect(!box.exists(".flow/.gitignore"), "a .gitignore removed stays removed")
        try FileManager.default.createDirectory(atPath: box.path("mine"), withIntermediateDirectories: false)
        #expect(try box.run(["run", "ok.yaml", "--state-dir", "mine"]).status == 0)
        #expect(box.exists("mine/journal.sqlite") && !box.exists("mine/.gitignore"), "an existing dir's files are not touched")
    }

    @Test func aStepSeesThePreviousStepsEndInTheJournal() throws {
        let box = try RunSandbox()
        try box.write("order.yaml", """
            name: order
            steps:
              - name: first
                shell: "true"
              - name: check
                shell: '"$FLOW_BIN" show "$FLOW_RUN_ID" --json > shown.json'
            """)
        let r = try box.run(["run", "order.yaml", "--output", "prefixed"], env: ["FLOW_BIN": RunSandbox.flowPath])
        #expect(r.status == 0, "\(r)")
        let shown = try #require(box.read("shown.json"), "the step wrote what flow show printed")
        let run = try #require(try JSONSerialization.jsonObject(with: Data(shown.utf8)) as? [String: Any], "\(shown)")
        let states = Self.stepStates(run)
        #expect(states["first"] == "succeeded", "\(states)")
        #expect(["running", "pending"].contains(states["check"] ?? ""), "\(states)")
        #expect(run["state"] as? String == "running", "the run was live")
    }

    /// `logs --follow` prints what a live run's steps print as they go, and ends with the run.
    /// `flow logs` streams: a 24 MB log (12 million prefixed lines) is printed under a 600 MB
    /// memory limit (it was read whole first, ~70 bytes of memory per byte of log).
    @Test func logsOfALargeRunAreStreamed() throws {
        let box = try RunSandbox()
        try box.write("w.yaml", "steps:\n  - name: big\n    shell: yes | head -c 24000000\n")
        let script = #"""
            "$0" run w.yaml > /dev/null 2>&1; echo "run $?"
            (ulimit -v 600000; "$0" logs last | wc -l; "$0" logs last big | wc -c)
            """#
        let result = try FlowBinary.run([], in: box.root, timeout: 120, shellScript: script)
        #expect(result.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
                == ["run 0", "12000000", "24000000"], "\(result)")
    }

    /// Starts `flow run` of a workflow `slow` whose step `talk` runs `command` (which prints
    /// `one` first) and `flow logs last --follow` once the journal has the run and the
    /// follower has printed `one`.
    /// `stateDir`: the journal's `--state-dir`, given to every command.
    static func followLiveRun(_ box: RunSandbox, command: String, stateDir: String? = nil,
                              sourceLocation: SourceLocation = #_sourceLocation) throws -> (run: LiveFlow, follow: LiveFlow) {
        let journal = stateDir.map { ["--state-dir", $0] } ?? []
        try box.write("slow.yaml", """
            name: slow
            steps:
              - name: talk
                shell: \(command)
            """)
        let run = try box.start(["run", "slow.yaml", "--output", "prefixed"] + journal)
        #expect(run.waitForLine("talk | one"), "the step has printed its first line", sourceLocation: sourceLocation)
        // The journal is opened beside the first step (docs/journal.md): under load the
        // step can print before the run is recorded, and `last` would name no run yet.
        let deadline = Date().addingTimeInterval(10)
        while try !box.run(["runs"] + journal).stdout.contains("slow"), Date() < deadline {}
        let follow = try box.start(["logs", "last", "--follow"] + journal)
        #expect(follow.waitFor { out, _ in out.contains("one") }, "the journal has the line while the step still runs",
                sourceLocation: sourceLocation)
        return (run, follow)
    }

    @Test func logsFollowPrintsALiveRunsLinesAndEndsWithIt() throws {
        let box = try RunSandbox()
        let (run, follow) = try Self.followLiveRun(box, command: "echo one; while [ ! -e go ]; do sleep 0.05; done; echo two")
        _ = try box.write("go", "")
        let ran = try run.finish()
        #expect(ran.status == 0, "\(ran)")
        let logs = try follow.finish(timeout: 10)
        #expect(logs.status == 0, "\(logs)")
        #expect(logs.stdout.contains("one") && logs.stdout.contains("two"), "\(logs)")
        #expect(logs.stderr.isEmpty, "a run that ended is no news: \(logs)")
    }

    /// A run followed while live whose flow is killed (SIGKILL, the OOM killer) ends the
    /// follow, as an ended one does, and says why the log stopped and how to carry the run
    /// on: it stopped with exit 0 and nothing said, like a run that had finished.
    @Test func logsFollowSaysARunWhoseProcessDiedStoppedBeforeItEnded() throws {
        let box = try RunSandbox()
        let (run, follow) = try Self.followLiveRun(box, command: "echo one; exec sleep 30")
        run.signal(SIGKILL)
        _ = try run.finish()
        let logs = try follow.finish(timeout: 10)
        #expect(logs.status == 0, "\(logs)")
        let id = try #require(try JournalEndToEndTests.runs(box).first?["id"] as? String)
        #expect(logs.stderr == "note: run \(id) stopped before it ended: its flow process died (killed, or it crashed); "
                + "`flow resume \(id)` carries it on\n", "\(logs)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// The note's command keeps the `--state-dir` the follow was given: pasted without it,
    /// `flow resume ID` looked for the run in the default journal.
    @Test func logsFollowsNoteOfADeadRunKeepsTheStateDir() throws {
        let box = try RunSandbox()
        let (run, follow) = try Self.followLiveRun(box, command: "echo one; exec sleep 30", stateDir: "mine")
        run.signal(SIGKILL)
        _ = try run.finish()
        let logs = try follow.finish(timeout: 10)
        #expect(logs.status == 0, "\(logs)")
        #expect(logs.stderr.hasSuffix("` carries it on\n") && logs.stderr.contains(" --state-dir mine`"), "\(logs)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    @Test func showLast() throws {
        let box = try RunSandbox()
        try box.write("demo.yaml", Self.demo)
        #expect(try box.run(["run", "demo.yaml", "--output", "prefixed"]).status == 1)
        let text = try box.run(["show", "last"])
        #expect(text.status == 0, "\(text)")
        for word in ["build", "test", "ship", "failed", "skipped", "exit 3"] {
            #expect(text.stdout.contains(word), "\(word): \(text)")
        }
        let run = try Self.show(box)
        #expect(run["state"] as? String == "failed")
        #expect(Self.stepStates(run) == ["build": "succeeded", "test": "failed", "ship": "skipped"], "\(run)")
        let test = (run["steps"] as? [[String: Any]])?.first { $0["name"] as? String == "test" }
        #expect(test?["exit_code"] as? Int == 3)
        let id = try #require(run["id"] as? String)
        let byID = try Self.show(box, id)
        #expect(byID["id"] as? String == id)
        let byPrefix = try box.run(["show", String(id.prefix(10))])
        #expect(byPrefix.status == 0, "a unique prefix: \(byPrefix)")
        let unknown = try box.run(["show", "no-such-run"])
        #expect(unknown.status != 0)
        #expect(!unknown.stderr.isEmpty)
    }

    /// An unnamed step's command or message is shown with its control characters escaped:
    /// the terminal must not act on them (a colour, a window title).
    @Test func showEscapesUnnamedStepsText() throws {
        let box = try RunSandbox()
        try box.write("esc.yaml", #"""
            steps:
              - shell: "echo \"\e[31mred\""
              - print: "hi\e]0;title\a"
            """#)
        #expect(try box.run(["run", "esc.yaml", "--output", "prefixed"]).status == 0)
        let text = try box.run(["show", "last"])
        #expect(text.status == 0, "\(text)")
        #expect(!text.stdout.contains("\u{1B}") && !text.stdout.contains("\u{7}"), "\(text)")
        #expect(text.stdout.contains(#"shell@1: echo "\u{1B}[31mred""#), "\(text)")
        #expect(text.stdout.contains(#"print@2: hi\u{1B}]0;title\u{7}"#), "\(text)")
    }

    @Test func logsOfARunAndOfOneStep() throws {
        let box = try RunSandbox()
        try box.write("demo.yaml", Self.demo)
        #expect(try box.run(["run", "demo.yaml", "--output", "prefixed"]).status == 1)
        let all = try box.run(["logs", "last"])
        #expect(all.status == 0, "\(all)")
        #expect(RunTests.hasLine(all.stdout, "build | building"), "\(all)")
        #expect(RunTests.hasLine(all.stdout, "build | warn"), "\(all)")
        #expect(RunTests.hasLine(all.stdout, "test | 1 test failed"), "\(all)")
        #expect(all.stdout.contains("demo failed"), "\(all)")
        let one = try box.run(["logs", "last", "test"])
        #expect(one.status == 0, "\(one)")
        #expect(one.stdout == "1 test failed\n", "\(one)")
    }

    /// Output is kept in one file per run beside the database; rows point into it. A file
    /// that went missing is named in a clear error, not a crash or an empty log.
    @Test func outputLivesInTheRunsFileAndAMissingFileIsNamed() throws {
        let box = try RunSandbox()
        try box.write("demo.yaml", Self.demo)
        #expect(try box.run(["run", "demo.yaml", "--output", "prefixed"]).status == 1)
        let id = try #require(try Self.runs(box).first?["id"] as? String)
        let file = box.state.appendingPathComponent("output/\(id).log").path
        let stored = try String(contentsOfFile: file, encoding: .utf8)
        #expect(stored.contains("building\n") && stored.contains("1 test failed\n"), "\(stored)")
        unlink(file)
        let logs = try box.run(["logs", "last"])
        #expect(logs.status != 0, "\(logs)")
        #expect(logs.stderr.contains(file), "\(logs)")
    }

    /// An output file cut short (a machine crash can keep the journal's rows but not the
    /// file's last bytes; or a hand) is read as far as it goes: the lines before the damage
    /// are printed, then the error (exit 2). They were dropped with the piece of output not
    /// yet written, so a small log printed nothing at all.
    @Test func logsOfACutOutputFilePrintWhatIsThere() throws {
        let box = try RunSandbox()
        try box.write("two.yaml", "name: two\nsteps:\n  - name: first\n    shell: echo one\n  - name: second\n    shell: echo two\n")
        #expect(try box.run(["run", "two.yaml", "--output", "prefixed"]).status == 0)
        let id = try #require(try Self.runs(box).first?["id"] as? String)
        let file = box.state.appendingPathComponent("output/\(id).log").path
        #expect(try String(contentsOfFile: file, encoding: .utf8) == "one\ntwo\n")
        #expect(truncate(file, 4) == 0)
        let logs = try box.run(["logs", "last"])
        #expect(logs.status == 2, "\(logs)")
        #expect(logs.stdout == "first  | one\n", "\(logs)")
        #expect(logs.stderr.contains("is shorter than the journal says"), "\(logs)")
    }

    static let resumable = """
        name: resumable
        steps:
          - name: once
            shell: |
              echo ran >> once.log
              echo "token=abc-$(wc -l < once.log | tr -d ' ')" >> "$FLOW_OUTPUT"
          - name: gate
            shell: test -f go
          - name: use_it
            shell: echo "token=${{ steps.once.outputs.token }}" >> used.log
        finally:
          - shell: echo finally >> fin.log
        """

    @Test func resumeSkipsSucceededStepsAndReusesOutputs() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.resumable)
        let first = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(first.status == 1, "\(first)")
        let firstID = try #require(try Self.runs(box).first?["id"] as? String)
        try box.write("go", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(box.lines("once.log") == ["ran"], "the succeeded step did not run again")
        #expect(box.lines("used.log") == ["token=abc-1"], "its outputs were reused")
        #expect(box.lines("fin.log") == ["finally", "finally"], "finally runs again")
        let runs = try Self.runs(box)
        #expect(runs.count == 2)
        #expect(runs.first?["kind"] as? String == "resume")
        #expect(runs.first?["parent_id"] as? String == firstID)
        #expect(runs.first?["state"] as? String == "succeeded")
        // A succeeded run cannot be resumed.
        let again = try box.run(["resume", "last"])
        #expect(again.status == 2, "\(again)")
    }

    /// Every step a resume reuses is named in prefixed output: "2 steps already succeeded"
    /// was followed by one `reused` line when the other step was a `print`.
    @Test func resumeNamesEveryReusedStepWhateverItsKind() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - print: hello
              - { name: s, shell: "true" }
              - { name: f, shell: test -f ok }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let firstID = try #require(try Self.runs(box).first?["id"] as? String)
        try box.write("ok", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderrLines.contains("resuming run \(firstID): 2 steps already succeeded"), "\(resumed)")
        #expect(resumed.stderrLines.contains("✓ print@1 reused from run \(firstID)"), "\(resumed)")
        #expect(resumed.stderrLines.contains("✓ s reused from run \(firstID)"), "\(resumed)")
    }

    @Test func resumeRefusesAChangedFileWithoutForce() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.resumable)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        try box.write("wf.yaml", Self.resumable + "\n# changed\n")
        try box.write("go", "")
        let refused = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(refused.status == 2, "\(refused)")
        #expect(!refused.stderr.isEmpty)
        #expect(box.lines("used.log").isEmpty, "nothing ran")
        let forced = try box.run(["resume", "last", "--force", "--output", "prefixed"])
        #expect(forced.status == 0, "\(forced)")
        #expect(box.lines("once.log") == ["ran"])
        #expect(box.lines("used.log") == ["token=abc-1"])
    }

    /// `resume --force` matches steps by path, a position: a step inserted before others
    /// used to take the recorded result at its position (it never ran, and its outputs were
    /// the earlier step's). A step that is not the one recorded there runs again, with a note.
    @Test func forcedResumeRunsAStepInsertedBeforeOthers() throws {
        let box = try RunSandbox()
        let fetch = """
              - name: fetch
                shell: echo fetch >> ran.log; echo "v=fetched" >> "$FLOW_OUTPUT"
              - name: gate
                shell: test -f go

            """
        try box.write("wf.yaml", "name: edited\nsteps:\n" + fetch)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let firstID = try #require(try Self.runs(box).first?["id"] as? String)
        try box.write("wf.yaml", """
            name: edited
            steps:
              - name: setup
                shell: echo setup >> ran.log; echo "v=set" >> "$FLOW_OUTPUT"

            """ + fetch + """
              - name: report
                shell: echo "setup=${{ steps.setup.outputs.v }} fetch=${{ steps.fetch.outputs.v }}" >> used.log
            """)
        try box.write("go", "")
        let forced = try box.run(["resume", "last", "--force", "--output", "prefixed"])
        #expect(forced.status == 0, "\(forced)")
        #expect(box.lines("ran.log") == ["fetch", "setup", "fetch"], "the inserted step ran, and fetch (now at 2) again")
        #expect(box.lines("used.log") == ["setup=set fetch=fetched"], "no step took another's outputs")
        #expect(forced.stderrLines.contains("resuming run \(firstID): 0 steps already succeeded"), "\(forced)")
        #expect(forced.stderrLines.contains("note: setup runs: run \(firstID) recorded another step in its place: fetch (shell)"),
                "\(forced)")
    }

    /// A named step keeps its label when its command is edited: what the run recorded for it
    /// (the content) says it is another command, and it runs again; an untouched step is reused.
    @Test func forcedResumeRunsANamedStepWhoseCommandChanged() throws {
        let box = try RunSandbox()
        let workflow = """
            name: edited
            steps:
              - name: kept
                shell: echo kept >> ran.log
              - name: fetch
                shell: echo fetch-1 >> ran.log
              - name: gate
                shell: test -f go
            """
        try box.write("wf.yaml", workflow)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let firstID = try #require(try Self.runs(box).first?["id"] as? String)
        try box.write("wf.yaml", workflow.replacingOccurrences(of: "fetch-1", with: "fetch-2"))
        try box.write("go", "")
        let forced = try box.run(["resume", "last", "--force", "--output", "prefixed"])
        #expect(forced.status == 0, "\(forced)")
        #expect(box.lines("ran.log") == ["kept", "fetch-1", "fetch-2"], "\(forced)")
        #expect(forced.stderrLines.contains("resuming run \(firstID): 1 step already succeeded"), "\(forced)")
        #expect(forced.stderrLines.contains("note: fetch runs again: its command is not the one run \(firstID) ran"), "\(forced)")
    }

    /// A forced resume killed before it reached a step holds that step as the run it
    /// resumed left it (`Journal.carriedSteps`), by path. After the edit the path can hold
    /// another step: resuming the killed resume reused, at `a1`'s new position, the result
    /// and outputs of `a2` that the first run had there, and `a1` never ran. A carried
    /// result goes through the identity check against the run it came from, with the note.
    @Test func aCarriedResultIsReusedOnlyForTheSameStep() throws {
        let box = try RunSandbox()
        let prep = """
              - name: prep
                shell: echo prep >> ran.log

            """
        let steps = """
              - name: a1
                shell: echo a1 >> ran.log; echo "v=one" >> "$FLOW_OUTPUT"
              - name: a2
                shell: echo a2 >> ran.log; echo "v=two" >> "$FLOW_OUTPUT"
              - name: gate
                shell: test -f go

            """
        try box.write("wf.yaml", "name: edited\nsteps:\n" + prep + steps)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let firstID = try #require(try Self.runs(box).first?["id"] as? String)
        // `prep`, reused, makes the journal hold the resume before `inserted` kills it.
        try box.write("wf.yaml", "name: edited\nsteps:\n" + prep + """
              - name: inserted
                shell: echo inserted >> ran.log; test -f fixed || kill -KILL $PPID

            """ + steps + """
              - name: report
                shell: echo "a1=${{ steps.a1.outputs.v }} a2=${{ steps.a2.outputs.v }}" >> used.log
            """)
        let killed = try box.run(["resume", "last", "--force", "--output", "prefixed"])
        #expect(killed.status == 128 + SIGKILL, "\(killed)")
        #expect(box.lines("ran.log") == ["prep", "a1", "a2", "inserted"])
        try box.write("fixed", "")
        try box.write("go", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(box.lines("ran.log") == ["prep", "a1", "a2", "inserted", "inserted", "a1", "a2"], "\(resumed)")
        #expect(box.lines("used.log") == ["a1=one a2=two"], "no step took another's outputs")
        #expect(resumed.stderr.contains("1 step already succeeded"), "\(resumed)")
        #expect(resumed.stderrLines.contains("note: a1 runs: run \(firstID) recorded another step in its place: a2 (shell)"),
                "\(resumed)")
    }

    /// `flow undo` of a forced resume killed before it reached a step takes that step as the
    /// run it resumed left it, by path too: it ran the `undo` of the step now at the path
    /// (`a1`) with the outputs of the step that had run there (`a2`: `undo-a1 two`). Such a
    /// step is left alone, with a note, rather than reversed by another step's undo.
    @Test func undoLeavesACarriedResultOfAnotherStepAlone() throws {
        let box = try RunSandbox()
        let prep = """
              - name: prep
                shell: echo prep >> ran.log
                undo:
                  shell: echo undo-prep >> ran.log

            """
        let steps = """
              - name: a1
                shell: echo a1 >> ran.log; echo "v=one" >> "$FLOW_OUTPUT"
                undo:
                  shell: echo "undo-a1 ${{ steps.a1.outputs.v }}" >> ran.log
              - name: a2
                shell: echo a2 >> ran.log; echo "v=two" >> "$FLOW_OUTPUT"
                undo:
                  shell: echo "undo-a2 ${{ steps.a2.outputs.v }}" >> ran.log
              - name: gate
                shell: test -f go

            """
        try box.write("wf.yaml", "name: edited\nsteps:\n" + prep + steps)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback", "--output", "prefixed"]).status == 1)
        let firstID = try #require(try Self.runs(box).first?["id"] as? String)
        try box.write("wf.yaml", "name: edited\nsteps:\n" + prep + """
              - name: inserted
                shell: echo inserted >> ran.log; kill -KILL $PPID

            """ + steps)
        #expect(try box.run(["resume", "last", "--force", "--output", "prefixed"]).status == 128 + SIGKILL)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("ran.log") == ["prep", "a1", "a2", "inserted", "undo-prep"], "\(undo)")
        #expect(undo.stderrLines.contains("note: a1 is not undone: run \(firstID) recorded another step in its place: a2 (shell); "
                                          + "that step's result is left as it is"), "\(undo)")
    }

    /// A workflow file that is there but cannot be read is not called gone: resume says why.
    @Test func resumeSaysWhyTheFileCannotBeRead() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.resumable)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        try FileManager.default.removeItem(atPath: box.path("wf.yaml"))
        let gone = try box.run(["resume", "last"])
        #expect(gone.status == 2 && gone.stderrLines.first == "error: wf.yaml is gone; resume would not run the same workflow", "\(gone)")
        // There is no current file: --force runs what was recorded, and the help says so
        // (it used to offer "the current file").
        #expect(gone.stderrLines.dropFirst().first == "help: use --force to resume with the workflow recorded with the run", "\(gone)")
        try FileManager.default.createDirectory(atPath: box.path("wf.yaml"), withIntermediateDirectories: false)
        let directory = try box.run(["resume", "last"])
        #expect(directory.status == 2, "\(directory)")
        #expect(directory.stderrLines.first == "error: wf.yaml cannot be read (it is a directory); resume would not run the same workflow",
                "\(directory)")
        #expect(directory.stderrLines.dropFirst().first == "help: use --force to resume with the workflow recorded with the run",
                "\(directory)")
        let forced = try box.run(["resume", "last", "--force", "--output", "prefixed"])
        #expect(forced.stderrLines.first == "note: wf.yaml cannot be read; resuming with the content recorded with the run", "\(forced)")
        try FileManager.default.removeItem(atPath: box.path("wf.yaml"))
        try box.write("wf.yaml", Self.resumable + "\n# edited\n")
        let changed = try box.run(["resume", "last"])
        #expect(changed.status == 2 && changed.stderrLines.dropFirst().first == "help: use --force to resume with the current file: a step that "
                + "succeeded is reused where the same step (name, kind and command, message or duration) is still in its place, and runs again where it is not", "\(changed)")
        #expect(changed.stderrLines.first == "error: wf.yaml changed since the run; resume would not run the same workflow", "\(changed)")
    }

    @Test func sigkilledRunIsInterruptedAndCanBeResumed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: crashy
            steps:
              - name: before
                shell: echo before >> log
              - name: hang
                shell: test -f resumed || $CHILD --stderr ready --sleep 60
              - name: after
                shell: echo after >> log
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("hang | ready"), "\(flow.stderr)")
        flow.signal(SIGKILL)
        #expect(flow.waitExit(timeout: 10) == 128 + SIGKILL)
        // SIGKILL cannot be forwarded: the orphaned child is ours to clean up (known limitation).
        box.killLeftovers()
        let runs = try Self.runs(box)
        #expect(runs.first?["state"] as? String == "interrupted", "\(runs)")
        let shown = try Self.show(box)
        #expect(Self.stepStates(shown)["before"] == "succeeded", "\(shown)")
        // The step the kill cut short is not `running`: nothing runs it any more.
        #expect(Self.stepStates(shown)["hang"] == "interrupted", "\(shown)")
        #expect(Self.stepStates(shown)["after"] == "pending", "\(shown)")
        #expect(runs.first?["counts"] as? [String: Int] == ["succeeded": 1, "interrupted": 1, "pending": 1], "\(runs)")
        let text = try box.run(["show", "last"])
        #expect(text.stdoutLines.contains("⚡ hang  [interrupted]"), "\(text)")
        try box.write("resumed", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(box.lines("log") == ["before", "after"])
        let after = try Self.runs(box)
        #expect(after.first?["kind"] as? String == "resume")
        #expect(after.first?["state"] as? String == "succeeded")
        #expect(after.last?["state"] as? String == "interrupted", "the killed run stays interrupted")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// flow killed the instant after a step ended (by the next step, its child): that end and
    /// its outputs were recorded before the next step started, and the next `flow` folds them
    /// in from the run's lock file (docs/journal.md, "Crash safety").
    @Test func aRunKilledJustAfterAStepEndedKeepsThatEnd() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: killed
            steps:
              - name: first
                shell: echo ran >> once.log; echo "token=abc-1" >> "$FLOW_OUTPUT"
              - name: crash
                shell: test -f resumed || kill -KILL $PPID
              - name: after
                shell: echo "${{ steps.first.outputs.token }}" >> used.log
            """)
        let killed = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(killed.status == 128 + SIGKILL, "\(killed)")
        let shown = try Self.show(box)
        let states = Self.stepStates(shown)
        #expect(states["first"] == "succeeded", "\(shown)")
        #expect(shown["state"] as? String == "interrupted")
        let locks = try FileManager.default.contentsOfDirectory(atPath: box.state.appendingPathComponent("locks").path)
        #expect(locks.isEmpty, "the dead run's file was folded in and removed: \(locks)")
        try box.write("resumed", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(box.lines("once.log") == ["ran"], "the recorded end is trusted: not run again")
        #expect(box.lines("used.log") == ["abc-1"], "with its outputs")
    }

    static let undoable = """
        name: undoable
        steps:
          - name: a
            shell: echo "id=A1" >> "$FLOW_OUTPUT"
            undo:
              shell: echo "undo-a ${{ steps.a.outputs.id }}" >> log
          - name: b
            shell: "true"
            undo:
              shell: echo undo-b >> log
          - name: c
            shell: "true"
            undo:
              shell: echo undo-c >> log
        """

    /// `run.status` in undo steps is how the run being rolled back ended: `succeeded` for
    /// `flow undo` of a run that succeeded (it said `failed`), `failed` in a failed run's.
    @Test func undoStepsSeeHowTheUndoneRunEnded() throws {
        let box = try RunSandbox()
        let workflow = #"""
            steps:
              - name: a
                shell: "true"
                undo:
                  shell: echo "undo ${{ run.status }}" >> log
              - name: b
                shell: exit CODE
            """#
        try box.write("wf.yaml", workflow.replacingOccurrences(of: "CODE", with: "0"))
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        #expect(try box.run(["undo", "last", "--output", "prefixed"]).status == 0)
        #expect(box.lines("log") == ["undo succeeded"])
        try box.write("wf.yaml", workflow.replacingOccurrences(of: "CODE", with: "1"))
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"]).status == 1)
        #expect(try box.run(["undo", "last", "--output", "prefixed"]).status == 0)
        #expect(box.lines("log") == ["undo succeeded", "undo failed", "undo failed"])
    }

    /// `flow undo` of a run that ended cancelled: the status functions of its undo steps
    /// agree with `run.status` (`cancelled`), as in that run's own rollback. `cancelled()`
    /// was false there, so an `if: cancelled()` undo step was skipped (and the step still
    /// counted undone), while `if: success()` ran.
    @Test func undoOfACancelledRunSeesCancelled() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  - { shell: 'echo "cancelled ${{ run.status }}" >> log', if: cancelled() }
                  - { shell: "echo success >> log", if: success() }
                  - { shell: "echo plain >> log" }
              - { name: wait, shell: $CHILD --stderr ready --sleep 30 }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"])
        #expect(flow.waitForLine("wait | ready"), "\(flow.stderr)")
        flow.signal(SIGTERM)
        let run = try flow.finish(timeout: 20)
        #expect(run.status == 143, "\(run)")
        #expect(box.lines("log").isEmpty, "--no-rollback: \(run)")
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["cancelled cancelled", "plain"], "\(undo)")
    }

    @Test func undoLastRunsUndoStepsInReverse() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.undoable)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        #expect(box.lines("log").isEmpty, "a successful run is not rolled back by itself")
        let runID = try #require(try Self.runs(box).first?["id"] as? String)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["undo-c", "undo-b", "undo-a A1"])
        #expect(Set(box.lines("log")) == ["undo-c", "undo-b", "undo-a A1"])
        // The steps being undone did not run again, and the output does not say they did.
        #expect(undo.stderrLines.contains("✓ a succeeded in run \(runID)"), "\(undo)")
        #expect(!undo.stderrLines.contains { $0.hasPrefix("▶ a") }, "\(undo)")
        let runs = try Self.runs(box)
        #expect(runs.first?["kind"] as? String == "undo")
        #expect(runs.first?["parent_id"] as? String == runID)
        let shown = try box.run(["show", "last"])
        #expect(shown.status == 0, "\(shown)")
        // Undoing twice is refused unless --force.
        let twice = try box.run(["undo", runID, "--output", "prefixed"])
        #expect(twice.status != 0, "\(twice)")
        #expect(box.lines("log").count == 3)
    }

    /// `flow undo` of a group with `undo`: the group's own steps are reversed by its undo,
    /// marked as succeeded in the run as the group is, and counted `undone` (they were left
    /// `pending`, so `show` listed them as never reached and `runs` counted "2 pending"; then
    /// `skipped: not undone by this run`, counted `0 succeeded, 3 skipped`). A step that did
    /// not succeed in the run is skipped, as is every other step the undo does not reverse.
    @Test func undoOfAGroupCountsTheStepsInsideItUndone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: deploy
                sequential:
                  - { name: tag, shell: echo "v=7" >> "$FLOW_OUTPUT" }
                  - { name: push, shell: "true" }
                undo:
                  shell: echo "revert ${{ steps.tag.outputs.v }} ${{ steps.push.status }}" >> log
              - { name: boom, shell: exit 1 }
            """)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback", "--output", "prefixed"]).status == 1)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["revert 7 succeeded"], "\(undo)")
        let shown = try Self.show(box)
        #expect(Self.stepStates(shown) == ["deploy": "undone", "tag": "succeeded", "push": "succeeded", "boom": "skipped"],
                "\(shown)")
        #expect(shown["counts"] as? [String: Int] == ["undone": 2], "\(shown)")
        #expect(undo.stderr.contains("✓ succeeded: 2 undone in "), "\(undo)")
        let original = try #require(try Self.runs(box).last?["id"] as? String)
        #expect(undo.stderrLines.filter { $0.hasPrefix("✓ ") && $0.hasSuffix(" succeeded in run \(original)") }
                    == ["tag", "push", "deploy"].map { "✓ \($0) succeeded in run \(original)" }, "\(undo)")
        #expect(try box.run(["runs"]).stdout.contains("(undo \(original))  2 undone\n"))
    }

    /// An undo counts what it reversed or tried, not the steps it left alone: a step with
    /// no `undo`, one skipped in the run, one whose failure was allowed. They were counted
    /// `skipped` (`0 succeeded, 3 skipped, 2 undone`), as if the undo had skipped steps it
    /// should have reversed, in the summary, `run_finished`, `flow runs` and `flow show`;
    /// `show` lists them `left alone` now. The journal still has them `skipped`.
    @Test func anUndoCountsOnlyWhatItReversed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true", undo: { shell: echo undo-a } }
              - { name: b, shell: "true" }
              - { name: c, if: "false", shell: "true", undo: { shell: echo undo-c } }
              - name: g
                sequential:
                  - { name: d, shell: "true", undo: { shell: echo undo-d } }
                  - { name: e, shell: exit 1, continue_on_error: true, undo: { shell: echo undo-e } }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let original = try #require(try Self.runs(box).first?["id"] as? String)
        let undo = try box.run(["undo", "last", "--output", "json"])
        #expect(undo.status == 0, "\(undo)")
        let finished = try #require(undo.stdoutLines.last.flatMap {
            try JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        })
        #expect(finished["event"] as? String == "run_finished", "\(undo)")
        #expect(finished["counts"] as? [String: Int] == ["undone": 2], "\(finished)")
        // The journal keeps them skipped (`not undone by this run`), as the events said.
        #expect(undo.stdout.contains("\"not undone by this run\""), "\(undo)")
        let text = try box.run(["undo", original, "--force", "--output", "prefixed"])
        #expect(text.stderrLines.last?.hasPrefix("✓ succeeded: 2 undone in ") == true, "\(text)")
        let runs = try Self.runs(box)
        #expect(runs.prefix(2).map { $0["counts"] as? [String: Int] } == [["undone": 2], ["undone": 2]], "\(runs)")
        let table = try box.run(["runs"])
        #expect(table.stdoutLines.filter { $0.contains("(undo \(original))") }.allSatisfy { $0.hasSuffix("  2 undone") }, "\(table)")
        let shown = try box.run(["show", "last"])
        #expect(shown.stdoutLines.last == "steps: 2 undone", "\(shown)")
        for name in ["b", "c", "e"] {
            #expect(shown.stdoutLines.contains { $0.hasSuffix("○ \(name)  [left alone]") }, "\(name): \(shown)")
        }
        #expect(Self.stepStates(try Self.show(box))["b"] == "skipped")
    }

    /// `flow show` of an undo listed the undo steps of a step it left alone (here one the
    /// run skipped, and one inside a group the run skipped) as `pending`, as if they were
    /// still to run; they never run in it and are not listed. The reversed step's are.
    @Test func anUndosShowListsNoUndoStepsOfTheStepsItLeftAlone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true", undo: { shell: echo undo-a } }
              - name: c
                if: "false"
                shell: "true"
                undo:
                  - shell: echo undo-c
                  - shell: echo undo-c2
              - name: g
                if: "false"
                sequential:
                  - { name: d, shell: "true", undo: { shell: echo undo-d } }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        #expect(try box.run(["undo", "last", "--output", "prefixed"]).status == 0)
        let shown = try box.run(["show", "last"])
        #expect(shown.status == 0, "\(shown)")
        #expect(!shown.stdout.contains("[pending]"), "\(shown)")
        #expect(!shown.stdout.contains("undo-c") && !shown.stdout.contains("undo-d"), "\(shown)")
        #expect(shown.stdoutLines.contains { $0.hasPrefix("  ✓ undo shell@1.u1: echo undo-a  [succeeded") }, "\(shown)")
        #expect(shown.stdoutLines.contains("○ c  [left alone]") && shown.stdoutLines.contains("  ○ d  [left alone]"), "\(shown)")
    }

    /// `flow show` of an ordinary run listed the undo steps of the steps that never
    /// succeeded in it (skipped, in a skipped group, failed) as `pending`, as work left to
    /// do: neither its rollback nor any `flow undo` of it runs them. They are not listed,
    /// as in the show of an undo; those of a step that succeeded and was not rolled back
    /// are (`flow undo` runs them), and `show --json` still lists every one as recorded.
    @Test func aRunsShowListsNoUndoStepsOfTheStepsThatNeverSucceeded() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true", undo: { shell: echo undo-a } }
              - { name: c, if: "false", shell: "true", undo: { shell: echo undo-c } }
              - name: g
                if: "false"
                sequential:
                  - { name: d, shell: "true", undo: { shell: echo undo-d } }
              - { name: e, shell: exit 1, continue_on_error: true, undo: { shell: echo undo-e } }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let shown = try box.run(["show", "last"])
        #expect(shown.status == 0, "\(shown)")
        #expect(!shown.stdout.contains("undo-c") && !shown.stdout.contains("undo-d") && !shown.stdout.contains("undo-e"), "\(shown)")
        #expect(shown.stdoutLines.contains("  · undo shell@1.u1: echo undo-a  [pending]"), "\(shown)")
        #expect(shown.stdoutLines.contains("○ c  [skipped]") && shown.stdoutLines.contains("  ○ d  [skipped]"), "\(shown)")
        let states = try #require(try Self.show(box)["steps"] as? [[String: Any]])
        let undoSteps = states.filter { ($0["path"] as? String)?.contains("u") == true }
        #expect(undoSteps.count == 4 && undoSteps.allSatisfy { $0["state"] as? String == "pending" }, "\(states)")
    }

    /// `flow undo` of a run with nothing left to undo exits 2 whoever undid it: the run's own
    /// rollback used to give exit 0 ("no succeeded steps with `undo`"), an earlier
    /// `flow undo` exit 2. A run that never had a step with `undo` still exits 0.
    @Test func undoOfARunAlreadyUndoneIsRefusedWhoeverUndidIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: u
            steps:
              - name: a
                shell: echo a
                undo:
                  - shell: echo undo-a >> undo.log
              - name: gate
                shell: test -f go
            """)
        // The run's own rollback undoes `a`.
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let rolledBack = try #require(try Self.runs(box).first?["id"] as? String)
        #expect(box.lines("undo.log") == ["undo-a"])
        for extra in [[], ["--force"]] {
            let own = try box.run(["undo", rolledBack, "--output", "prefixed"] + extra)
            #expect(own.status == 2, "\(own)")
            #expect(own.stderrLines == ["error: run \(rolledBack) was already rolled back by its own rollback (1 step undone); "
                                        + "nothing is left to undo"], "\(own)")
        }
        // An earlier `flow undo` undoes it.
        try box.write("go", "")
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let succeeded = try #require(try Self.runs(box).first?["id"] as? String)
        #expect(try box.run(["undo", succeeded, "--output", "prefixed"]).status == 0)
        let again = try box.run(["undo", succeeded, "--output", "prefixed"])
        #expect(again.status == 2, "\(again)")
        #expect(again.stderrLines.first?.hasPrefix("error: run \(succeeded) was already undone by run ") == true, "\(again)")
        #expect(box.lines("undo.log") == ["undo-a", "undo-a"], "nothing was undone twice")
        // Nothing with an `undo` ever: an empty undo, exit 0.
        try box.write("plain.yaml", "name: plain\nsteps:\n  - shell: echo plain\n")
        #expect(try box.run(["run", "plain.yaml", "--output", "prefixed"]).status == 0)
        let plain = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(plain.status == 0, "\(plain)")
        #expect(plain.stdout.hasSuffix("nothing to roll back\n"), "\(plain)")
    }

    /// A second `undo` (or `resume`) of a run while one is going on is refused: both used
    /// to pass the "already undone?" check before either had finished, and the run was
    /// rolled back twice. The first removes the claim it held as it ends.
    @Test func aRunIsUndoneOrResumedByOneFlowAtATime() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            rollback: false
            steps:
              - name: a
                shell: "true"
                undo:
                  name: back
                  shell: echo undoing; while [ ! -f go ]; do sleep 0.02; done; echo undone >> log
              - shell: exit 1
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let runID = try #require(try Self.runs(box).first?["id"] as? String)
        let first = try box.start(["undo", runID, "--output", "prefixed"])
        #expect(first.waitForLine("back | undoing"), "the first undo is under way")
        for command in ["undo", "resume"] {
            let second = try box.run([command, runID, "--output", "prefixed"])
            #expect(second.status == 2, "\(second)")
            #expect(second.stderr == "error: run \(runID) is being resumed, undone or pruned by another flow now; try again once that ends\n",
                    "\(second)")
        }
        try box.write("go", "")
        #expect(try first.finish().status == 0)
        #expect(box.lines("log") == ["undone"], "rolled back once")
        let again = try box.run(["undo", runID, "--output", "prefixed"])
        #expect(again.status == 2 && again.stderr.contains("already undone"), "\(again)")
        let locks = box.state.appendingPathComponent("locks").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: locks).isEmpty, "no claim left behind")
    }

    /// A `resume` or `undo` removes its claim file (`locks/ID.claim`) as it exits, however
    /// it ends: they were left for a later `flow` to remove once over 10 s old, and stayed
    /// for good when no `flow` came (found by the crash audit, after an undo stopped by
    /// Ctrl-C). One killed by SIGKILL cannot: its claim, free, is removed by a later `flow`
    /// once old (while fresh it may be a `take`'s about to lock it).
    @Test func aResumeOrUndoRemovesItsClaimAsItEnds() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  name: back
                  shell: if [ -f stop ]; then kill -INT $PPID; fi; if [ -f hold ]; then echo holding; while [ ! -f go ]; do sleep 0.02; done; fi
              - name: b
                shell: if [ -f resumed ]; then echo b; else exit 1; fi
            """)
        let locks = box.state.appendingPathComponent("locks").path
        func left() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: locks).sorted() }
        func failedRun() throws -> String {
            #expect(try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"]).status == 1)
            return try #require(try Self.runs(box).first?["id"] as? String)
        }
        // A resume that succeeds.
        let resumed = try failedRun()
        try box.write("resumed", "")
        let resume = try box.run(["resume", resumed, "--output", "prefixed"])
        #expect(resume.status == 0, "\(resume)")
        #expect(try left().isEmpty, "after a resume")
        try FileManager.default.removeItem(atPath: box.path("resumed"))
        // An undo that succeeds, and one refused (nothing left to undo).
        let undone = try failedRun()
        let undo = try box.run(["undo", undone, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(try left().isEmpty, "after an undo")
        let refused = try box.run(["undo", undone, "--output", "prefixed"])
        #expect(refused.status == 2, "\(refused)")
        #expect(try left().isEmpty, "after a refused undo")
        // An undo stopped by SIGINT (from its own undo step, so it comes while it runs).
        let stopped = try failedRun()
        try box.write("stop", "")
        let cancelled = try box.run(["undo", stopped, "--output", "prefixed"])
        #expect(cancelled.status == 130, "\(cancelled)")
        #expect(try left().isEmpty, "after a cancelled undo")
        try FileManager.default.removeItem(atPath: box.path("stop"))
        // An undo killed by SIGKILL leaves its claim, free; a later flow removes it once old.
        let killed = try failedRun()
        try box.write("hold", "")
        let live = try box.start(["undo", killed, "--output", "prefixed"])
        #expect(live.waitForLine("back | holding"), "the undo is under way")
        live.signal(SIGKILL)
        _ = live.waitExit(timeout: 20)
        #expect(try box.run(["runs"]).status == 0)
        #expect(try left() == ["\(killed).claim"], "fresh: left")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: -60)],
                                              ofItemAtPath: locks + "/\(killed).claim")
        #expect(try box.run(["runs"]).status == 0)
        #expect(try left().isEmpty, "old and free: removed")
        try box.write("go", "")
    }

    /// A `flow undo` enters the run's recorded directory, and with a relative `--state-dir`
    /// its claim file was then looked for under that directory as it exited, and left.
    @Test func anUndoWithARelativeStateDirRemovesItsClaimAsItEnds() throws {
        let box = try RunSandbox()
        try box.write("a/sub/wf.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  shell: "true"
            """)
        #expect(try box.run(["run", "wf.yaml", "--state-dir", "../../rel", "--output", "prefixed"], in: "a/sub").status == 0)
        let undo = try box.run(["undo", "last", "--state-dir", "rel", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        let locks = box.root.appendingPathComponent("rel/locks").path
        #expect(try FileManager.default.contentsOfDirectory(atPath: locks).filter { $0.hasSuffix(".claim") }.isEmpty, "no claim left behind")
    }

    /// `runs --prune` leaves a run that a `resume` (or `undo`) is carrying on: it deleted it
    /// under the live resume (found by the concurrency audit), whose record then named a run
    /// the journal no longer had, and a prune between the resume's reading of the run and
    /// its start made it run every step again. Once the resume has ended, both go.
    @Test func aPruneLeavesARunThatIsBeingResumed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
              - name: b
                shell: if [ -f resumed ]; then echo waiting; while [ ! -f go ]; do sleep 0.02; done; else exit 1; fi
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let runID = try #require(try Self.runs(box).first?["id"] as? String)
        try box.write("resumed", "")
        let resume = try box.start(["resume", runID, "--output", "prefixed"])
        #expect(resume.waitForLine("b | waiting"), "the resume is under way")
        for prune in [["--prune", "0"], ["--prune-older-than", "0s"]] {
            let pruned = try box.run(["runs"] + prune)
            #expect(pruned.status == 0 && pruned.stdout == "pruned 0 runs\n", "\(pruned)")
        }
        #expect(try Self.runs(box).compactMap { $0["id"] as? String }.contains(runID), "the run resumed is kept")
        try box.write("go", "")
        let resumed = try resume.finish()
        #expect(resumed.status == 0, "\(resumed)")
        let pruned = try box.run(["runs", "--prune", "0"])
        #expect(pruned.stdout == "pruned 2 runs\n", "\(pruned)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: box.state.appendingPathComponent("locks").path).isEmpty,
                "the prune's claims are gone with the runs")
    }

    /// `flow logs --follow` of a run deleted by `runs --prune` once it ended, while the
    /// follower was a round behind, stopped short with exit 0, as if the run had printed no
    /// more (found by the concurrency audit). It says so, exit 2. The follower is stopped
    /// (SIGSTOP) while the run ends and is pruned, so the order does not depend on timing.
    @Test func followingARunPrunedMeanwhileSaysSo() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: echo first; while [ ! -f go ]; do sleep 0.02; done; echo second
            """)
        let run = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.waitForLine("a | first"))
        // Its row is written once its journal is open, beside the first step (the first run
        // of a state dir makes the journal then: until it has, `runs` says there is none).
        var runID: String?
        let deadline = Date().addingTimeInterval(10)
        while runID == nil, Date() < deadline {
            let r = try box.run(["runs", "--json"])
            guard r.status == 0 else { continue }
            runID = (try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [[String: Any]])?.first?["id"] as? String
        }
        let follow = try box.start(["logs", try #require(runID), "--follow"])
        #expect(follow.waitForLine("a | first"), "\(follow.stdout)")
        kill(follow.pid, SIGSTOP)
        try box.write("go", "")
        #expect(try run.finish().status == 0)
        let pruned = try box.run(["runs", "--prune", "0"])
        #expect(pruned.stdout == "pruned 1 run\n", "\(pruned)")
        kill(follow.pid, SIGCONT)
        let followed = try follow.finish()
        #expect(followed.status == 2, "\(followed)")
        #expect(followed.stdout == "a | first\n", "\(followed)")
        #expect(followed.stderr == "error: run \(runID ?? "") was deleted (`flow runs --prune`) while its output was read; "
                + "what it printed after the lines above is gone\n", "\(followed)")
    }

    /// The lock file of a run killed before it recorded itself (its row never written) is
    /// removed once it is over 10 minutes old; a newer one is left, as its run may be about
    /// to record itself. It stayed for good (found by the concurrency audit).
    @Test func anOldLockFileOfARunTheJournalNeverHadIsRemoved() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - shell: \"true\"\n")
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let locks = box.state.appendingPathComponent("locks")
        let old = locks.appendingPathComponent("0badc0de.lock").path
        let new = locks.appendingPathComponent("1badc0de.lock").path
        #expect(FileManager.default.createFile(atPath: old, contents: nil))
        #expect(FileManager.default.createFile(atPath: new, contents: nil))
        var times = [timeval(tv_sec: time(nil) - 3600, tv_usec: 0), timeval(tv_sec: time(nil) - 3600, tv_usec: 0)]
        #expect(utimes(old, &times) == 0)
        let runs = try box.run(["runs"])
        #expect(runs.status == 0, "\(runs)")
        #expect(!FileManager.default.fileExists(atPath: old), "an hour old: removed")
        #expect(FileManager.default.fileExists(atPath: new), "just made: left")
    }

    /// A killed run whose lock file another `flow` is folding into the journal reads
    /// `interrupted`, not `running`: the folding `flow` held the file's lock exclusively, and
    /// while its fold waited for the database's write lock (up to 10 s behind another writer)
    /// every other `flow` read the dead run as live (found by the concurrency audit). Here a
    /// transaction of the test's holds that write lock; the two `flow runs` are watched
    /// through /proc/locks, so nothing depends on timing.
    @Test func aKilledRunBeingFoldedInByAnotherFlowReadsInterrupted() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: echo started; while [ ! -f go ]; do sleep 0.02; done
            """)
        let run = try box.start(["run", "wf.yaml", "--output", "prefixed"], ownGroup: true)
        #expect(run.waitForLine("a | started"))
        var runID: String?
        let deadline = Date().addingTimeInterval(10)
        while runID == nil, Date() < deadline { runID = try Self.runs(box).first?["id"] as? String }
        let id = try #require(runID)
        kill(-run.pid, SIGKILL)
        _ = try run.finish()
        let lockFile = box.state.appendingPathComponent("locks/\(id).lock").path
        var info = stat()
        #expect(stat(lockFile, &info) == 0, "the dead run's file is not folded in yet")
        /// How many locks are held on the dead run's lock file.
        func holders() -> Int {
            let table = (try? String(contentsOfFile: "/proc/locks", encoding: .utf8)) ?? ""
            return table.split(separator: "\n").filter { $0.contains("FLOCK") && $0.hasSuffix(":\(info.st_ino) 0 EOF") }.count
        }
        var db: OpaquePointer?
        #expect(sqlite3_open(box.state.appendingPathComponent("journal.sqlite").path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        #expect(sqlite3_exec(db, "BEGIN IMMEDIATE; UPDATE runs SET state = state", nil, nil, nil) == SQLITE_OK)
        // The first `flow` takes the dead run's file, then waits for the write lock to fold it.
        let folding = try box.start(["runs"])
        let until = Date().addingTimeInterval(20)
        while holders() == 0, Date() < until { usleep(1000) }
        #expect(holders() == 1, "the first flow holds the dead run's file")
        let reader = try box.start(["runs", "--json"])
        // It reads at once (before the fix: `running`), or waits to fold the file too.
        while reader.waitExit(timeout: 0.01) == nil, holders() < 2, Date() < until {}
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
        let read = try reader.finish()
        #expect(try folding.finish().status == 0)
        let runs = try JSONSerialization.jsonObject(with: Data(read.stdout.utf8)) as? [[String: Any]]
        #expect(runs?.first?["state"] as? String == "interrupted", "\(read)")
        try box.write("go", "")
    }

    /// A SIGTERM while `flow undo` waits for the journal to hold its run (another writer
    /// has the database) is the undo's to record: flow handled signals only after that
    /// wait, so it was killed outright, nothing undone and the undo's lock file left behind
    /// for good (found by the concurrency audit). Now the undo runs to the end, as a signal
    /// never stops one halfway, and ends `cancelled`, 143. The test's transaction holds the
    /// write lock; the undo's lock file says it is waiting for it.
    @Test func aSIGTERMWhileAnUndoWaitsForTheJournalIsRecorded() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  shell: echo undone >> log
              - shell: exit 1
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"]).status == 1)
        let runID = try #require(try Self.runs(box).first?["id"] as? String)
        let locks = box.state.appendingPathComponent("locks").path
        var db: OpaquePointer?
        #expect(sqlite3_open(box.state.appendingPathComponent("journal.sqlite").path, &db) == SQLITE_OK)
        defer { sqlite3_close(db) }
        #expect(sqlite3_exec(db, "BEGIN IMMEDIATE; UPDATE runs SET state = state", nil, nil, nil) == SQLITE_OK)
        let undo = try box.start(["undo", runID, "--output", "prefixed"])
        // The undo's run takes its lock file, then waits for the write lock to record itself.
        let deadline = Date().addingTimeInterval(20)
        func waiting() -> Bool {
            ((try? FileManager.default.contentsOfDirectory(atPath: locks)) ?? []).contains { $0.hasSuffix(".lock") }
        }
        while !waiting(), undo.waitExit(timeout: 0.01) == nil, Date() < deadline {}
        #expect(waiting(), "the undo waits for the journal")
        // Its SIGTERM is caught already (`SigCgt`, bit 15): before the fix it was not yet,
        // and the signal killed it.
        let status = (try? String(contentsOfFile: "/proc/\(undo.pid)/status", encoding: .utf8)) ?? ""
        let caught = status.split(separator: "\n").first { $0.hasPrefix("SigCgt:") }
            .flatMap { UInt64($0.dropFirst("SigCgt:".count).trimmingCharacters(in: .whitespaces), radix: 16) } ?? 0
        #expect(caught & (1 << (UInt64(SIGTERM) - 1)) != 0, "flow handles SIGTERM while it waits for the journal")
        kill(undo.pid, SIGTERM)
        sqlite3_exec(db, "ROLLBACK", nil, nil, nil)
        let undone = try undo.finish()
        #expect(undone.status == 143, "\(undone)")
        #expect(box.lines("log") == ["undone"], "the undo ran to the end")
        let record = try Self.runs(box).first
        #expect(record?["kind"] as? String == "undo" && record?["state"] as? String == "cancelled"
                && record?["exit_status"] as? Int == 143, "\(String(describing: record))")
        #expect(try FileManager.default.contentsOfDirectory(atPath: locks).filter { $0.hasSuffix(".lock") }.isEmpty)
    }

    @Test func undoInsideAnActionSeesTheActionsParams() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params:
                  env: { required: true }
                steps:
                  - name: push
                    shell: echo "push ${{ params.env }}" >> log
                    undo:
                      shell: echo "undo push ${{ params.env }}" >> log
            steps:
              - use: deploy
                with: { env: staging }
              - shell: exit 3
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"]).status == 1)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["push staging", "undo push staging"])
    }

    /// `flow undo` evaluates a `use`'s `with` again for its steps' undo, as the run did:
    /// a value from an earlier step's output or status, or from the declared `env`, came
    /// out empty (`pending` for a status), so `undo push ${{ params.ver }}` undid version
    /// "" where the run's own rollback undid 42.
    @Test func undoInsideAnActionSeesParamsFromOutputsAndEnv() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            env: { REGION: eu }
            actions:
              deploy:
                params:
                  ver: { required: true }
                  region: { required: true }
                  tagged: { required: true }
                steps:
                  - name: push
                    shell: echo "push ${{ params.ver }} ${{ params.region }} ${{ params.tagged }}" >> log
                    undo:
                      shell: echo "undo push ${{ params.ver }} ${{ params.region }} ${{ params.tagged }}" >> log
            steps:
              - name: tag
                shell: echo "version=42" >> "$FLOW_OUTPUT"
              - use: deploy
                env: { REGION: us }
                with: { ver: "${{ steps.tag.outputs.version }}", region: "${{ env.REGION }}", tagged: "${{ steps.tag.status }}" }
              - shell: exit 3
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"]).status == 1)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        // The run's own rollback, then the later `flow undo` of the second run: the same.
        #expect(box.lines("log") == [
            "push 42 us succeeded", "undo push 42 us succeeded",
            "push 42 us succeeded", "undo push 42 us succeeded",
        ], "\(undo)")
    }

    @Test func undoWithAFailingUndoGoesOnAndExitsOne() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.undoable.replacingOccurrences(of: "echo undo-b >> log", with: "echo undo-b >> log; exit 4"))
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 1, "\(undo)")
        #expect(box.lines("log") == ["undo-c", "undo-b", "undo-a A1"])
        #expect(Set(box.lines("log")) == ["undo-c", "undo-b", "undo-a A1"], "every undo ran despite the failure")
    }

    /// `flow undo` of a group with `undo` holding a group that failed (allowed) with a step
    /// that succeeded inside: the group's undo reverses that step too, and the undo run
    /// counts it `undone`, as the run's own rollback does. It was skipped (`not undone by
    /// this run`): only steps under groups that succeeded were marked.
    @Test func undoOfAGroupCountsAStepInsideAFailedGroupInsideItUndone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                sequential:
                  - name: h
                    continue_on_error: true
                    sequential:
                      - { name: ok, shell: "true" }
                      - { name: bad, shell: exit 3 }
                  - { name: after, shell: "true" }
                undo: { shell: echo undo-g >> log }
              - { name: boom, shell: exit 1 }
            """)
        let rolledBack = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(rolledBack.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 2 failed (1 allowed), 2 undone in ") == true,
                "\(rolledBack)")
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"]).status == 1)
        let original = try #require(try Self.runs(box).first?["id"] as? String)
        let undo = try box.run(["undo", original, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(undo.stderr.contains("✓ succeeded: 2 undone in "), "\(undo)")
        #expect(undo.stderrLines.filter { $0.hasSuffix(" succeeded in run \(original)") }
                    == ["ok", "after", "g"].map { "✓ \($0) succeeded in run \(original)" }, "\(undo)")
        let shown = try Self.show(box)
        #expect(shown["counts"] as? [String: Int] == ["undone": 2], "\(shown)")
        #expect(Self.stepStates(shown)["ok"] == "succeeded" && Self.stepStates(shown)["bad"] == "skipped", "\(shown)")
    }

    /// A run's rollback of a group counts the steps its undo reversed `undone`, as it counts a
    /// step its own undo reversed: the summary counts leaves, and said `2 succeeded, 1
    /// failed` of a run that had rolled back everything it did. A failure inside the group
    /// stays a failure (nothing of it to reverse). The summary, the `run_finished` event,
    /// `runs` and `show` agree.
    @Test func aRunsRollbackOfAGroupCountsTheStepsItReversedUndone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                sequential:
                  - { name: a, shell: "true" }
                  - { name: b, shell: "true", undo: { shell: echo undo-b >> log } }
                  - { name: soft, shell: exit 2, continue_on_error: true }
                undo: { shell: echo undo-g >> log }
              - { name: boom, shell: exit 1 }
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 1, "\(run)")
        #expect(box.lines("log") == ["undo-g", "undo-b"], "\(run)")
        #expect(run.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 2 failed (1 allowed), 2 undone in ") == true, "\(run)")
        let shown = try Self.show(box)
        #expect(shown["counts"] as? [String: Int] == ["failed": 2, "undone": 2], "\(shown)")
        #expect(Self.stepStates(shown) == ["g": "undone", "a": "succeeded", "b": "undone", "soft": "failed", "boom": "failed"],
                "\(shown)")
        #expect(try box.run(["runs"]).stdout.contains("2 failed (1 allowed), 2 undone"))
        let json = try box.run(["run", "wf.yaml", "--output", "json", "--no-journal"])
        let finished = try #require(json.stdoutLines.last.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] })
        #expect(finished["counts"] as? [String: Int] == ["failed": 2, "undone": 2], "\(json)")
    }

    /// A retried group around a group with `undo` that succeeded in both attempts: the
    /// rollback reverses the inner group twice, the latest instance first. When that undo
    /// succeeds and the earlier one's fails, the group is counted `undo_failed` and its step
    /// `succeeded`, as the journal's rows count it (the group's row is `undo_failed`) and as
    /// a leaf whose earlier instance's undo failed is counted: the summary said `1 undone`
    /// beside `✗ inner undo failed`, and `flow runs` counting the rows `1 succeeded, …,
    /// 1 undo_failed`.
    @Test func aGroupWhoseEarlierInstancesUndoFailedIsCountedUndoFailed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: outer
                retry: 1
                sequential:
                  - name: inner
                    sequential:
                      - { name: a, shell: "true" }
                    undo: { shell: "test ! -f undone-once; touch undone-once" }
                  - { name: flaky, shell: exit 1 }
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 1 succeeded, 1 failed, 1 undo_failed in ") == true, "\(run)")
        let shown = try Self.show(box)
        #expect(Self.stepStates(shown) == ["outer": "failed", "inner": "undo_failed", "a": "succeeded", "flaky": "failed"], "\(shown)")
        #expect(shown["counts"] as? [String: Int] == ["succeeded": 1, "failed": 1, "undo_failed": 1], "\(shown)")
    }

    /// A group's (or a `use`'s) undo that fails fails `flow undo` as a leaf's does: the
    /// summary counts only leaves, and the undo run said `✓ succeeded`, exited 0 and was
    /// recorded `succeeded`, with `✗ g undo failed` printed just above.
    @Test func undoWhereAGroupsUndoFailsExitsOne() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                sequential:
                  - { name: a, shell: echo a }
                undo: { name: ug, shell: echo undo-g >> log; exit 4 }
              - { name: b, shell: echo b, undo: { name: ub, shell: echo undo-b >> log } }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 1, "\(undo)")
        #expect(box.lines("log") == ["undo-b", "undo-g"], "every undo ran despite the failure: \(undo)")
        #expect(undo.stderrLinesBeforeHint.last?.hasPrefix("✗ failed:") == true, "\(undo)")
        // Last, how to undo what it did not: `flow undo` of the run again.
        let undone = try #require(try Self.runs(box).last?["id"] as? String)
        #expect(undo.stderrLines.last == FlowOutcome.undoHintPrefix + FlowOutcome.flowInHint + " undo \(undone)", "\(undo)")
        let shown = try Self.show(box)
        #expect(shown["kind"] as? String == "undo" && shown["state"] as? String == "failed", "\(shown)")
        // The summary says what failed (it counted leaves: `✗ failed: 1 skipped,
        // 1 undone`), and the history agrees: the step inside the group its undo left is
        // still as the run left it.
        #expect(undo.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 1 succeeded, 1 undone, 1 undo_failed in ") == true, "\(undo)")
        #expect(shown["counts"] as? [String: Int] == ["succeeded": 1, "undone": 1, "undo_failed": 1], "\(shown)")
    }

    /// The hint of an undo left unfinished names the `--state-dir` it was given, as a
    /// resume's does: without it, `flow undo ID` looked for the run in the default journal.
    @Test func anUnfinishedUndosHintKeepsItsStateDir() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: echo a, undo: { name: ua, shell: exit 4 } }
            """)
        #expect(try box.run(["run", "wf.yaml", "--state-dir", "mine"]).status == 0)
        let undo = try box.run(["undo", "last", "--state-dir", "mine", "--output", "prefixed"])
        #expect(undo.status == 1, "\(undo)")
        let hint = try #require(undo.resumeHint, "\(undo)")
        #expect(hint.hasSuffix(" --state-dir mine") && hint.contains(" undo "), "\(undo)")
        // Pasted as it is, it finds the run and undoes what is left.
        let again = try box.run(Array(hint.split(separator: " ").dropFirst().map(String.init)) + ["--output", "prefixed"])
        #expect(again.status == 1 && !again.stderr.contains("no run"), "\(again)")
        #expect(again.stderr.contains("✗ a undo failed"), "\(again)")
    }

    /// A run's own rollback where a group's `undo` fails: the summary counts the group
    /// `undo_failed` (it said `1 failed, 1 undone`: a rollback left incomplete, unsaid),
    /// and so do `runs` and `show`. A retried group's superseded attempt is not counted.
    @Test func aGroupsFailedUndoIsCountedInTheRunsSummary() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                sequential:
                  - { name: a, shell: echo a }
                undo: { name: ug, shell: exit 4 }
              - { name: b, shell: echo b, undo: { name: ub, shell: "true" } }
              - name: broken
                shell: exit 1
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 1 succeeded, 1 failed, 1 undone, 1 undo_failed in ") == true, "\(run)")
        let shown = try Self.show(box)
        #expect(shown["counts"] as? [String: Int] == ["succeeded": 1, "failed": 1, "undone": 1, "undo_failed": 1], "\(shown)")
        let text = try box.run(["show", "last"])
        #expect(text.stdoutLines.last == "steps: 1 succeeded, 1 failed, 1 undone, 1 undo_failed", "\(text)")

        // Attempt 1 of `outer` runs `g`, attempt 2 fails inside it: the rollback undoes
        // attempt 1's `g` and that fails, but the counts are of each step's latest state.
        try box.write("retried.yaml", """
            steps:
              - name: outer
                retry: 1
                sequential:
                  - name: g
                    sequential:
                      - { name: a, shell: test ! -f once }
                    undo: { name: ug, shell: exit 4 }
                  - { name: mark, shell: "test -f once || { touch once; exit 1; }" }
            """)
        let retried = try box.run(["run", "retried.yaml", "--output", "prefixed"])
        #expect(retried.status == 1, "\(retried)")
        #expect(retried.stderr.contains("✗ g undo failed"), "\(retried)")
        #expect(retried.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: 1 failed, 1 skipped in ") == true, "\(retried)")
        #expect(try Self.show(box)["counts"] as? [String: Int] == ["failed": 1, "skipped": 1])
    }

    /// Undo steps see the recorded outputs of every step, not only of the steps being
    /// undone (the others' results were overwritten by their `skipped`: `rm -rf "$dir/f"`
    /// became `rm -rf "/f"`).
    @Test func undoSeesTheOutputsOfStepsWithoutUndo() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: outputs
            steps:
              - name: mkdir
                shell: echo "dir=/some/where" >> "$FLOW_OUTPUT"
              - name: fill
                shell: "true"
                undo:
                  shell: echo "undo fill in [${{ steps.mkdir.outputs.dir }}]" >> log
            """)
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["undo fill in [/some/where]"])
    }

    static let twoUndos = """
        name: two
        steps:
          - name: a
            shell: echo run-a >> log
            undo:
              shell: echo undo-a >> log
          - name: b
            shell: echo run-b >> log
            undo:
              shell: echo undo-b >> log; test -f ok-b
          - name: use
            shell: test -f marker
        """

    /// An undo, then a `flow undo --force` whose undo step failed: its hint, `to undo what is
    /// left: flow undo ID`, works. The plain `flow undo` runs again what the forced one
    /// failed to reverse (its latest word on the step), and only that; the step the forced
    /// undo reversed is left alone. The hint's command was refused (`already undone by run
    /// <first>`), the first undo having reversed the step before. Once all is undone the
    /// refusal names the latest undo that reversed it.
    @Test func theHintOfAFailedForcedUndoRunsWhatItLeft() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: make
                shell: echo made
                undo:
                  - shell: echo undo-make >> log; test ! -f broken
              - name: keep
                shell: echo kept
                undo:
                  - shell: echo undo-keep >> log
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let runID = try #require(try Self.runs(box).first?["id"] as? String)
        #expect(try box.run(["undo", runID, "--output", "prefixed"]).status == 0)
        try box.write("broken", "")
        let forced = try box.run(["undo", runID, "--force", "--output", "prefixed"])
        #expect(forced.status == 1, "\(forced)")
        #expect(forced.resumeHint == FlowOutcome.flowInHint + " undo \(runID)", "\(forced)")
        try FileManager.default.removeItem(atPath: box.path("broken"))
        try box.write("log", "")
        let again = try box.run(["undo", runID, "--output", "prefixed"])
        #expect(again.status == 0, "\(again)")
        #expect(box.lines("log") == ["undo-make"], "only what the forced undo failed to reverse: \(again)")
        #expect(again.stderrLines.contains("undoing run \(runID): 1 step already undone by an earlier undo left alone (--force undoes them again)"),
                "\(again)")
        let latest = try #require(try Self.runs(box).first?["id"] as? String)
        let last = try box.run(["undo", runID, "--output", "prefixed"])
        #expect(last.status == 2, "\(last)")
        #expect(last.stderrLines.first == "error: run \(runID) was already undone by run \(latest)", "\(last)")
    }

    /// An undo a signal cancelled runs its undo steps to the end: when every one reversed
    /// its step it left nothing to undo, and says no `to undo what is left: flow undo ID`,
    /// a command that was refused (`already undone`).
    @Test func aCancelledUndoThatReversedEverythingGivesNoHint() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true", undo: { shell: echo undo-a >> log } }
              - { name: b, shell: "true", undo: { shell: "echo undo-b >> log; kill -INT $PPID" } }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let runID = try #require(try Self.runs(box).first?["id"] as? String)
        let undo = try box.run(["undo", runID, "--output", "prefixed"])
        #expect(undo.status == 130, "\(undo)")
        #expect(box.lines("log") == ["undo-b", "undo-a"], "\(undo)")
        #expect(undo.resumeHint == nil, "\(undo)")
        #expect(undo.stderrLines.last?.hasPrefix("⊘ cancelled: 2 undone in ") == true, "\(undo)")
        #expect(try box.run(["undo", runID, "--output", "prefixed"]).status == 2)
    }

    /// A step whose rollback failed (in the run, or in an earlier `flow undo`) is undone by
    /// the next `flow undo`; steps already undone are left alone, and once every one is,
    /// another undo is refused. Before, a failed rollback could never be retried (`flow undo`
    /// said success), and a second undo reversed again what the first had.
    @Test func undoRetriesOnlyWhatWasNotUndone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.twoUndos)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 1, "\(run)")
        #expect(box.lines("log") == ["run-a", "run-b", "undo-b", "undo-a"], "b's undo failed, a's ran")
        let runID = try #require(try Self.runs(box).first?["id"] as? String)
        let first = try box.run(["undo", runID, "--output", "prefixed"])
        #expect(first.status == 1, "b's undo fails again: \(first)")
        try box.write("ok-b", "")
        let second = try box.run(["undo", runID, "--output", "prefixed"])
        #expect(second.status == 0, "\(second)")
        #expect(box.lines("log") == ["run-a", "run-b", "undo-b", "undo-a", "undo-b", "undo-b"], "only b, each time")
        let third = try box.run(["undo", runID, "--output", "prefixed"])
        #expect(third.status == 2 && third.stderr.contains("was already undone by run"), "\(third)")

        // The same after a `flow undo` that undid some steps and not others.
        let other = try RunSandbox()
        try other.write("wf.yaml", Self.twoUndos)
        try other.write("marker", "")
        #expect(try other.run(["run", "wf.yaml"]).status == 0)
        #expect(try other.run(["undo", "last"]).status == 1)
        let otherID = try #require(try Self.runs(other).first { $0["kind"] as? String == "run" }?["id"] as? String)
        try other.write("ok-b", "")
        let retry = try other.run(["undo", otherID, "--output", "prefixed"])
        #expect(retry.status == 0, "\(retry)")
        #expect(retry.stderr.contains("1 step already undone by an earlier undo left alone"), "\(retry)")
        #expect(other.lines("log") == ["run-a", "run-b", "undo-b", "undo-a", "undo-b"], "a is not undone twice")
    }

    /// A run is one history with its resumes and undos: resuming after `flow undo` runs the
    /// undone steps again (it reused them, though their effect was gone), and a run carried
    /// on by a resume is undone or resumed through that resume (undoing both reversed the
    /// shared steps twice; resuming the old one ran again what the resume had done).
    @Test func resumeAndUndoFollowTheRunsLaterRuns() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.twoUndos)
        try box.write("ok-b", "")
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let runID = try #require(try Self.runs(box).first?["id"] as? String)
        #expect(try box.run(["undo", runID]).status == 0)
        try box.write("marker", "")
        let resumed = try box.run(["resume", runID, "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderr.contains("resuming run \(runID): 0 steps already succeeded"), "\(resumed)")
        #expect(box.lines("log") == ["run-a", "run-b", "undo-b", "undo-a", "run-a", "run-b"])

        let resumeID = try #require(try Self.runs(box).first?["id"] as? String)
        let undoOld = try box.run(["undo", runID])
        #expect(undoOld.status == 2, "\(undoOld)")
        #expect(undoOld.stderr.contains("was resumed as run \(resumeID) (succeeded)"), "\(undoOld)")
        #expect(undoOld.stderr.contains("help: flow undo \(resumeID)"), "\(undoOld)")
        let resumeOld = try box.run(["resume", runID])
        #expect(resumeOld.status == 2 && resumeOld.stderr.contains("there is nothing left to resume"), "\(resumeOld)")
        #expect(try box.run(["undo", resumeID]).status == 0)
        #expect(box.lines("log").suffix(2) == ["undo-b", "undo-a"])
        #expect(box.lines("log").count == 8, "the shared steps were undone once")
    }

    /// A run whose `deploy` succeeded after a step that failed (`continue_on_error`), and
    /// whose resume is killed before it gets to `deploy` again (`kill` makes `lint` kill flow).
    static let carriedOn = """
        name: carried
        steps:
          - name: a
            shell: echo a >> log; echo "id=A1" >> "$FLOW_OUTPUT"
            undo:
              shell: echo "undo-a ${{ steps.a.outputs.id }}" >> log
          - name: lint
            continue_on_error: true
            shell: test -f fixed || { test -f kill || exit 1; kill -KILL $PPID; }
          - name: deploy
            shell: echo deploy >> log; echo "id=D1" >> "$FLOW_OUTPUT"
            undo:
              shell: echo "undo-deploy ${{ steps.deploy.outputs.id }}" >> log
          - name: check
            shell: test -f fixed
        """

    /// A resume killed before it got to a step the resumed run had done leaves that step
    /// done: resuming the resume does not run it again, and undoing the resume reverses it
    /// (with its outputs, in the order the steps ran). The killed resume's own record has
    /// it `pending`, and the old run may no longer be resumed or undone: `deploy` ran twice,
    /// and `flow undo` of the killed resume left it deployed.
    @Test func aStepAKilledResumeNeverReachedStaysDone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.carriedOn)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback", "--output", "prefixed"]).status == 1)
        try box.write("kill", "")
        #expect(try box.run(["resume", "last", "--output", "prefixed"]).status == 128 + SIGKILL)
        #expect(box.lines("log") == ["a", "deploy"])
        try box.write("fixed", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderr.contains("2 steps already succeeded"), "\(resumed)")
        #expect(box.lines("log") == ["a", "deploy"], "deploy is not run again")
        #expect(try box.run(["undo", "last", "--output", "prefixed"]).status == 0)
        #expect(box.lines("log") == ["a", "deploy", "undo-deploy D1", "undo-a A1"])

        // `flow undo` of the killed resume itself.
        let other = try RunSandbox()
        try other.write("wf.yaml", Self.carriedOn)
        #expect(try other.run(["run", "wf.yaml", "--no-rollback", "--output", "prefixed"]).status == 1)
        try other.write("kill", "")
        #expect(try other.run(["resume", "last", "--output", "prefixed"]).status == 128 + SIGKILL)
        let undo = try other.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(other.lines("log") == ["a", "deploy", "undo-deploy D1", "undo-a A1"], "deploy undone, after a as it ran")
    }

    /// A resume of a resume names the run a reused result came from: `deploy`, carried on
    /// from the first run past the killed resume that never reached it, and `a`, which the
    /// killed resume only reused from the first run. Both said `reused from run` the killed
    /// resume, live and in `flow show`, as if it had run them.
    @Test func aResumeOfAResumeNamesTheRunThatRanAStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.carriedOn)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback", "--output", "prefixed"]).status == 1)
        let firstID = try #require(try Self.runs(box).first?["id"] as? String)
        try box.write("kill", "")
        #expect(try box.run(["resume", "last", "--output", "prefixed"]).status == 128 + SIGKILL)
        let killedID = try #require(try Self.runs(box).first?["id"] as? String)
        try box.write("fixed", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderrLines.contains("resuming run \(killedID): 2 steps already succeeded"), "\(resumed)")
        #expect(resumed.stderrLines.contains("✓ a reused from run \(firstID)"), "\(resumed)")
        #expect(resumed.stderrLines.contains("✓ deploy reused from run \(firstID)"), "\(resumed)")
        let show = try box.run(["show", "last"])
        #expect(show.status == 0, "\(show)")
        for name in ["a", "deploy"] {
            #expect(show.stdoutLines.contains { $0.hasPrefix("✓ \(name)  [succeeded · reused from run \(firstID)") }, "\(show)")
        }
        let json = try box.run(["show", "last", "--json"])
        #expect(json.stdout.components(separatedBy: "\"reused_from\": \"\(firstID)\"").count == 3, "\(json)")
    }

    /// `flow undo` of a `--force` resume reverses a step the resume ran again (its command
    /// was edited) as completed then, after the steps it reused from the run before: the
    /// rerun step took the earlier run's completion (it had succeeded there too), so `s1`,
    /// run last, was undone last. Found by the model-based resume/undo audit.
    @Test func undoOfAForcedResumeReversesARerunStepAsCompletedThen() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: s1, shell: echo s1 >> log, undo: "echo undo-s1 >> log" }
              - { name: s2, shell: echo s2 >> log, undo: "echo undo-s2 >> log" }
              - { name: s3, shell: test -f ok && echo s3 >> log, undo: "echo undo-s3 >> log" }
            """)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        try box.write("wf.yaml", """
            steps:
              - { name: s1, shell: echo s1 >> log; true, undo: "echo undo-s1 >> log" }
              - { name: s2, shell: echo s2 >> log, undo: "echo undo-s2 >> log" }
              - { name: s3, shell: test -f ok && echo s3 >> log, undo: "echo undo-s3 >> log" }
            """)
        try box.write("ok", "")
        let resumed = try box.run(["resume", "last", "--force", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderr.contains("note: s1 runs again"), "\(resumed)")
        #expect(box.lines("log") == ["s1", "s2", "s1", "s3"])
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log").suffix(3) == ["undo-s3", "undo-s1", "undo-s2"], "latest completion first")
    }

    /// A resume's own rollback reverses the steps it reused as they first ran, before what
    /// it ran itself, as `flow undo` of it does: `s2` ran in the first run and `s1` only
    /// in the resume, so `s1` is undone first. The rollback reversed reused steps at their
    /// reuse (`undo-s2, undo-s1`) while `flow undo` went `undo-s1, undo-s2`; left open by
    /// the model-based resume/undo audit.
    @Test func aResumesRollbackReversesReusedStepsAsTheyFirstRan() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: s1, continue_on_error: true, shell: test -f ok && echo s1 >> log, undo: "echo undo-s1 >> log" }
              - { name: s2, shell: echo s2 >> log, undo: "echo undo-s2 >> log" }
              - { name: s3, shell: test -f never, undo: "echo undo-s3 >> log" }
            """)
        for undoLater in [false, true] {
            try? FileManager.default.removeItem(atPath: box.path("log"))
            try? FileManager.default.removeItem(atPath: box.path("ok"))
            #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
            try box.write("ok", "")
            // The run's --no-rollback carries on to the resume: `--rollback` turns it back on.
            let resumed = try box.run(["resume", "last", "--output", "prefixed"] + (undoLater ? [] : ["--rollback"]))
            #expect(resumed.status == 1, "\(resumed)")
            if undoLater { #expect(try box.run(["undo", "last", "--output", "prefixed"]).status == 0) }
            #expect(box.lines("log") == ["s2", "s1", "undo-s1", "undo-s2"], "undo later: \(undoLater)")
        }
    }

    /// `resume` reuses a step that succeeded whatever its `if` says now: an `if: failure()`
    /// step that ran is not skipped because the failure is gone (it was, yet counted as
    /// reused, and its `undo` dropped out of the rollback).
    @Test func resumeReusesAStepThatRanWhateverItsIfSaysNow() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: r
            steps:
              - { name: flaky, shell: test -f ok }
              - name: notify
                if: failure()
                shell: echo notified >> log
                undo:
                  shell: echo unnotified >> log
              - { name: last, shell: test -f ok2 }
            """)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        try box.write("ok", "")
        let resumed = try box.run(["resume", "last", "--rollback", "--output", "prefixed"])
        #expect(resumed.status == 1, "\(resumed)")
        #expect(resumed.stderr.contains("resuming run") && resumed.stderr.contains("1 step already succeeded"), "\(resumed)")
        #expect(resumed.stderr.contains("✓ notify reused from run"), "\(resumed)")
        #expect(box.lines("log") == ["notified", "unnotified"], "its undo is in the rollback")
    }

    /// A retried group in a `flow resume` reuses the earlier run's results in its first
    /// attempt only: a retry runs the group's steps again from the start, as in any run.
    /// Every attempt reused `login` (the token the failed attempt found stale), so the
    /// retry could never do again what it is there to do again; the rollback then reverses
    /// both logins, latest first.
    @Test func aRetriedGroupInAResumeRunsItsStepsAgainOnRetry() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                retry: 1
                sequential:
                  - name: login
                    shell: n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n; echo "tok=t$n" >> "$FLOW_OUTPUT"; echo "login t$n" >> log
                    undo: { shell: 'echo "logout ${{ steps.login.outputs.tok }}" >> log' }
                  - name: push
                    shell: 'echo "push ${{ steps.login.outputs.tok }}" >> log; test -f ok'
              - { name: last, shell: echo last >> log }
            """)
        // Both attempts of the run fail (tokens t0 and t1); the resume's first attempt
        // reuses t1 and fails, its retry logs in again (t2) and fails too.
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        #expect(box.lines("log") == ["login t0", "push t0", "login t1", "push t1"])
        try? FileManager.default.removeItem(atPath: box.path("log"))
        let resumed = try box.run(["resume", "last", "--rollback", "--output", "prefixed"])
        #expect(resumed.status == 1, "\(resumed)")
        #expect(resumed.stderr.components(separatedBy: "✓ login reused from run").count == 2, "\(resumed)")
        #expect(box.lines("log") == ["push t1", "login t2", "push t2", "logout t2", "logout t1"], "\(resumed)")
    }

    /// The journal says where a step of a resume came from by its latest instance: `login`,
    /// reused in the first attempt of its retried group and run again in the second, is the
    /// resume's own result (`show` said `reused from` the first run, and a resume of the
    /// resume named that run for the token the resume had made).
    @Test func aStepRunAgainInARetriedGroupIsTheResumesOwn() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                retry: 1
                sequential:
                  - name: login
                    shell: n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n; echo "tok=t$n" >> "$FLOW_OUTPUT"
                  - name: push
                    shell: 'echo "push ${{ steps.login.outputs.tok }}" >> log; test -f ok'
            """)
        #expect(try box.run(["run", "wf.yaml"]).status == 1)
        #expect(try box.run(["resume", "last"]).status == 1)
        let resumeID = try #require(try Self.runs(box).first?["id"] as? String)
        let show = try Self.show(box, resumeID)
        let login = Self.step(named: "login", in: show)
        #expect(login?["reused_from"] is NSNull, "\(show)")
        #expect((login?["outputs"] as? [String: String]) == ["tok": "t2"], "\(show)")
        try box.write("ok", "")
        let again = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(again.status == 0, "\(again)")
        #expect(again.stderr.contains("✓ login reused from run \(resumeID)"), "\(again)")
        #expect(box.lines("log").last == "push t2", "\(again)")
    }

    /// So is a step skipped in a later attempt of its retried group after the resume reused
    /// it in the first: `show` has it `skipped`, taken from no earlier run.
    @Test func aStepSkippedInALaterAttemptOfAResumeIsNotReused() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                retry: 1
                sequential:
                  - name: probe
                    shell: 'n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n; if [ $n -lt 2 ]; then echo need=yes; else echo need=no; fi >> "$FLOW_OUTPUT"'
                  - { name: login, if: "steps.probe.outputs.need == 'yes'", shell: "true" }
                  - { name: push, shell: test -f ok }
            """)
        #expect(try box.run(["run", "wf.yaml"]).status == 1)
        #expect(try box.run(["resume", "last"]).status == 1)
        let show = try Self.show(box)
        let login = Self.step(named: "login", in: show)
        #expect(login?["state"] as? String == "skipped", "\(show)")
        #expect(login?["reused_from"] is NSNull, "\(show)")
    }

    /// `--output grouped` says where a step `resume` or `undo` took from the earlier run
    /// comes from, as `prefixed` does: its block header showed `(0.0s)`, as if it had run.
    @Test func groupedOutputSaysAStepWasReused() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true", undo: "true" }
              - { name: b, shell: test -f ok }
            """)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let runID = try #require(try Self.runs(box).first?["id"] as? String)
        try box.write("ok", "")
        let resumed = try box.run(["resume", "last", "--output", "grouped"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderrLines.contains("── ✓ a (reused from run \(runID)) ──"), "\(resumed)")
        let undone = try box.run(["undo", "last", "--output", "grouped"])
        #expect(undone.status == 0, "\(undone)")
        #expect(undone.stderrLines.contains("── ✓ a (succeeded in run \(runID)) ──"), "\(undone)")
    }

    @Test func fourConcurrentRunsOnOneStateDir() throws {
        let box = try RunSandbox()
        var flows: [LiveFlow] = []
        for i in 1...4 {
            var text = "name: w\(i)\nsteps:\n"
            for j in 1...5 { text += "  - name: s\(j)\n    shell: echo run\(i)-step\(j); echo \"k=\(j)\" >> \"$FLOW_OUTPUT\"\n" }
            text += "  - name: p\n    print: done \(i)\n"
            try box.write("w\(i).yaml", text)
        }
        for i in 1...4 { flows.append(try box.start(["run", "w\(i).yaml", "--output", "prefixed"])) }
        var results: [FlowOutcome] = []
        for flow in flows {
            let r = try flow.finish(timeout: 60)
            #expect(r.status == 0, "\(r)")
            results.append(r)
        }
        let runs = try Self.runs(box)
        for r in results { #expect(!r.stderr.contains("not recorded"), "\(r)") }
        #expect(runs.count == 4, "\(runs)")
        #expect(Set(runs.compactMap { $0["workflow"] as? String }) == ["w1", "w2", "w3", "w4"])
        #expect(runs.allSatisfy { $0["state"] as? String == "succeeded" })
        for run in runs {
            let id = try #require(run["id"] as? String)
            let logs = try box.run(["logs", id])
            #expect(logs.stdout.split(separator: "\n").count == 6, "\(logs)")
        }
    }

    /// The journal opens beside the run (`JournalRecorder.opening`): a run that is over
    /// before a new journal is made, and one that prints more than the recorder buffers
    /// meanwhile, are still recorded whole, in order.
    @Test func runsThatEndBeforeTheJournalIsOpenAreRecordedWhole() throws {
        let box = try RunSandbox()
        var text = "name: quick\nsteps:\n"
        for i in 1...300 { text += "  - name: p\(i)\n    print: line \(i)\n" }
        text += "  - name: big\n    shell: yes \(String(repeating: "x", count: 100)) | head -n 6000\n"
        try box.write("quick.yaml", text)
        let r = try box.run(["run", "quick.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        #expect(!r.stderr.contains("not recorded"), "\(r)")
        let run = try Self.show(box)
        let steps = try #require(run["steps"] as? [[String: Any]])
        #expect(steps.count == 301)
        #expect(steps.allSatisfy { $0["state"] as? String == "succeeded" }, "\(steps.prefix(3))")
        let logs = try box.run(["logs", "last", "big"])
        #expect(logs.stdout.utf8.count == 606_000, "6,000 lines of 101 bytes: \(logs.stdout.utf8.count)")
        let first = try box.run(["logs", "last", "p1"])
        #expect(first.stdout == "line 1\n", "\(first)")
    }

    @Test func fourConcurrentRunsOnAnExistingJournal() throws {
        let box = try RunSandbox()
        try box.write("first.yaml", "name: first\nsteps:\n  - shell: \"true\"\n")
        #expect(try box.run(["run", "first.yaml", "--output", "prefixed"]).status == 0)
        var flows: [LiveFlow] = []
        for i in 1...4 {
            var text = "name: w\(i)\nsteps:\n"
            for j in 1...5 { text += "  - name: s\(j)\n    shell: echo run\(i)-step\(j)\n" }
            try box.write("w\(i).yaml", text)
        }
        for i in 1...4 { flows.append(try box.start(["run", "w\(i).yaml", "--output", "prefixed"])) }
        for flow in flows {
            let r = try flow.finish(timeout: 60)
            #expect(r.status == 0, "\(r)")
            #expect(!r.stderr.contains("not recorded"), "\(r)")
        }
        let runs = try Self.runs(box)
        #expect(runs.count == 5, "\(runs)")
        #expect(runs.allSatisfy { $0["state"] as? String == "succeeded" })
    }

    @Test func corruptDatabaseIsReportedAndTheRunStillHappens() throws {
        let box = try RunSandbox()
        try FileManager.default.createDirectory(at: box.state, withIntermediateDirectories: true)
        var garbage = Data("this is not a database, just garbage bytes\n".utf8)
        while garbage.count < 8192 { garbage.append(garbage) }
        try garbage.write(to: box.state.appendingPathComponent("journal.sqlite"))
        try box.write("demo.yaml", Self.demo)
        let failing = try box.run(["run", "demo.yaml", "--output", "prefixed"])
        #expect(failing.status == 1, "the run's status: \(failing)")
        #expect(RunTests.hasLine(failing.stdout, "build | building"), "\(failing)")
        #expect(failing.stderr.lowercased().contains("journal") || failing.stderr.contains("database"), "\(failing)")
        let errorLines = failing.stderrLines.filter { $0.contains("not recorded") || $0.lowercased().hasPrefix("error") }
        #expect(errorLines.count == 1, "said once: \(failing)")
        try box.write("ok.yaml", "steps:\n  - name: one\n    shell: echo one\n")
        let ok = try box.run(["run", "ok.yaml", "--output", "prefixed"])
        #expect(ok.status == 0, "\(ok)")
        #expect(RunTests.hasLine(ok.stdout, "one | one"))
        #expect(!ok.stderr.isEmpty, "the damaged journal is mentioned")
        let runs = try box.run(["runs"])
        #expect(runs.status != 0, "reading a damaged journal fails: \(runs)")
        #expect(!runs.stderr.isEmpty)
        #expect(!runs.stderr.contains("Fatal error"), "\(runs)")
    }

    /// Another program's SQLite database as journal.sqlite: one with a `runs` table of its
    /// own said SQLite's "table runs already exists", and one with other tables got flow's
    /// tables added to it. Both are "not a flow journal", naming the file, and left as they were.
    @Test func aForeignDatabaseIsNotAFlowJournal() throws {
        for table in ["runs (id INTEGER, note TEXT)", "notes (body TEXT)"] {
            let box = try RunSandbox()
            let dir = box.state.path
            try FileManager.default.createDirectory(at: box.state, withIntermediateDirectories: true)
            do {
                let db = try SQLiteConnection(path: dir + "/journal.sqlite")
                try db.execute("CREATE TABLE \(table)")
            }
            let message = "error: \(dir)/journal.sqlite is not a flow journal (an SQLite database with tables of its own); "
                + "move it away, or use another --state-dir"
            for command in [["runs"], ["show", "last"], ["logs", "last"], ["resume", "last"], ["undo", "last"]] {
                let r = try box.run(command)
                #expect(r.status == 2, "\(command): \(r)")
                #expect(r.stderrLines == [message], "\(command): \(r)")
            }
            try box.write("ok.yaml", "name: ok\nsteps:\n  - print: hi\n")
            let run = try box.run(["run", "ok.yaml", "--output", "prefixed"])
            #expect(run.status == 0, "the run goes on unrecorded: \(run)")
            // Said once, before or after the summary: the journal is opened on a thread of its
            // own while the run goes on, and a one-step run may end first (docs/journal.md).
            #expect(run.stderrLines.filter { $0.hasPrefix("error:") } == [message + "; this run is not recorded"], "\(run)")
            let db = try SQLiteConnection(path: dir + "/journal.sqlite")
            let tables: Int? = try db.value("SELECT COUNT(*) FROM sqlite_master")
            #expect(tables == 1, "nothing was added to it")
        }
    }

    /// Step ends flow has acted on stay in the journal of a run killed while a background
    /// commit was under way that had taken a transition the lock file lacked (here the start
    /// of the second of two concurrent steps; in a short run, the first step's start, taken
    /// by the commit that follows the journal's opening). The ends after it were appended to
    /// the lock file past that gap, and a dead run's lines are folded in only without gaps:
    /// the run read `a succeeded, b interrupted, c pending, d pending` though d had started
    /// after both ended (found by reading `JournalRecorder`; it explains a run of
    /// `countsShowEveryState` that read `{"pending": 2}`). Another connection holds the
    /// write lock to keep the commit under way; flow now waits for it before it logs.
    @Test func stepEndsAfterATransitionABackgroundCommitTookSurviveAKill() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
              - name: pair
                concurrent:
                  - name: b
                    shell: touch b-started; while [ ! -f locked ]; do sleep 0.01; done; while ! grep -q marker "$FLOW_STATE_DIR"/output/*.log; do sleep 0.01; done
                  - name: c
                    shell: touch c-started; while [ ! -f locked ]; do sleep 0.01; done; echo marker; while ! grep -q marker "$FLOW_STATE_DIR"/output/*.log; do sleep 0.01; done
              - name: d
                shell: kill -KILL $PPID
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        let deadline = Date().addingTimeInterval(30)
        while !(box.exists("b-started") && box.exists("c-started")), Date() < deadline { usleep(10_000) }
        #expect(box.exists("b-started") && box.exists("c-started"))
        do {
            // Both started, neither ended: the later start is not in the lock file. The next
            // background commit takes it (and flushes `marker` to the output file, which b
            // and c wait for) and then waits for this lock.
            let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
            try db.execute("BEGIN IMMEDIATE")
            _ = try box.write("locked", "")
            // Held until flow is dead (as it was) or for 2 s (now flow waits for the commit).
            _ = flow.waitExit(timeout: 2)
            try db.execute("ROLLBACK")
        }
        #expect(try flow.finish().status == 128 + SIGKILL)
        let show = try Self.show(box)
        let states = Dictionary(((show["steps"] as? [[String: Any]]) ?? []).map { ($0["name"] as? String ?? "", $0["state"] as? String ?? "") },
                                uniquingKeysWith: { a, _ in a })
        #expect(states == ["a": "succeeded", "pair": "succeeded", "b": "succeeded", "c": "succeeded", "d": "interrupted"], "\(show)")
    }

    /// Several `flow`s opening a journal from before v4 at once each see it as it is now:
    /// one migrates it, the others find it migrated. Each read which migrations it lacked
    /// before taking the write lock, and the later ones ran v4 again: `duplicate column
    /// name: workflow_path_bytes`, exit 2 (about one round in ten; found by reading
    /// `JournalSchema.migrate`). Rounds of four `flow runs` at once, from before v4 (v4 and
    /// v5 to apply) and from before v5 (its `allowed_failure` columns).
    @Test(arguments: ["v3", "v4"])
    func flowsOpeningAnOlderJournalAtOnceMigrateItOnce(_ schema: String) throws {
        let box = try RunSandbox()
        for round in 0..<40 {
            let dir = box.root.appendingPathComponent("state\(round)").path
            try FileManager.default.createDirectory(atPath: dir + "/locks", withIntermediateDirectories: true)
            try Self.makeOldJournal(in: dir, upTo: schema)
            let flows = try (0..<4).map { _ in try box.start(["runs", "--state-dir", dir]) }
            for flow in flows {
                let runs = try flow.finish(timeout: 60)
                #expect(runs.status == 0 && runs.stdout.contains("oldrun-1  failed"), "round \(round): \(runs)")
            }
        }
    }

    /// A journal of schema `schema` (v3: before the byte columns of v4; v4: before v5's
    /// `allowed_failure`) in `dir`, holding one failed run, `oldrun-1`.
    static func makeOldJournal(in dir: String, upTo schema: String) throws {
        let db = try SQLiteConnection(path: dir + "/journal.sqlite")
        try db.execute("PRAGMA journal_mode = WAL")
        try JournalSchema.migrate(db, upTo: schema)
        try db.execute("""
            INSERT INTO runs (id, kind, workflow_path, workflow_name, content_hash, content, args, cwd, started_at, state, pid, host)
            VALUES ('oldrun-1', 'run', 'w.yaml', 'w', 'h', x'', '{}', '/', 1, 'failed', 1, 'host');
            """)
    }

    /// A journal from before v4 that this user may read but not write (another user's) is
    /// still listed and shown: the migration, which would write, is left for a flow that
    /// may. Likewise one from before v5, read without its `allowed_failure` columns. (Root
    /// is not stopped by permissions: it reads as `nobody` here.)
    @Test(arguments: ["v3", "v4"])
    func aJournalThatCannotBeMigratedIsStillRead(_ schema: String) throws {
        let root = getuid() == 0
        let setpriv = "/usr/bin/setpriv"
        guard !root || FileManager.default.isExecutableFile(atPath: setpriv) else { return }
        let box = try RunSandbox()
        let dir = box.state.path
        try FileManager.default.createDirectory(at: box.state.appendingPathComponent("locks"), withIntermediateDirectories: true)
        try Self.makeOldJournal(in: dir, upTo: schema)
        // Anyone may make files in the state dir (as in a shared one); the database is not theirs.
        chmod(dir, 0o777)
        chmod(dir + "/journal.sqlite", 0o444)
        defer { chmod(dir + "/journal.sqlite", 0o644) }
        let script = root ? "exec \(setpriv) --reuid=65534 --regid=65534 --clear-groups \"$0\" \"$@\"" : "exec \"$0\" \"$@\""
        let runs = try FlowBinary.run(["runs", "--state-dir", dir], in: box.root, shellScript: script)
        #expect(runs.status == 0, "\(runs)")
        #expect(runs.stdout.contains("oldrun-1  failed"), "\(runs)")
        let show = try FlowBinary.run(["show", "oldrun", "--state-dir", dir], in: box.root, shellScript: script)
        #expect(show.status == 0 && show.stdout.hasPrefix("run oldrun-1 · w (w.yaml) · failed"), "\(show)")
    }

    /// A journal in a state dir this user cannot write, which SQLite cannot give a `-shm`
    /// file: `runs`, `show` and `logs` read the database file as it is when the last
    /// writer left no WAL behind, and say why they cannot when it did. (Root is not stopped
    /// by permissions: it reads as `nobody` here.)
    @Test func aJournalInADirectoryThatCannotBeWrittenIsRead() throws {
        let root = getuid() == 0
        let setpriv = "/usr/bin/setpriv"
        guard !root || FileManager.default.isExecutableFile(atPath: setpriv) else { return }
        let box = try RunSandbox()
        try box.write("demo.yaml", Self.demo)
        _ = try box.run(["run", "demo.yaml", "--output", "prefixed"])
        let dir = box.state.path
        do {
            // The last connection to close checkpoints the WAL and removes it and `-shm`.
            let db = try SQLiteConnection(path: dir + "/journal.sqlite")
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        #expect(!box.exists(".flow/journal.sqlite-wal") && !box.exists(".flow/journal.sqlite-shm"))
        chmod(dir, 0o555)
        defer { chmod(dir, 0o755) }
        let script = root ? "exec \(setpriv) --reuid=65534 --regid=65534 --clear-groups \"$0\" \"$@\"" : "exec \"$0\" \"$@\""
        let runs = try FlowBinary.run(["runs", "--state-dir", dir], in: box.root, shellScript: script)
        #expect(runs.status == 0 && runs.stdout.contains("  failed  "), "\(runs)")
        let show = try FlowBinary.run(["show", "last", "--state-dir", dir], in: box.root, shellScript: script)
        #expect(show.status == 0 && show.stdout.contains("✗ test  [failed · exit 3"), "\(show)")
        let logs = try FlowBinary.run(["logs", "last", "build", "--state-dir", dir], in: box.root, shellScript: script)
        #expect(logs.status == 0 && logs.stdout.contains("building"), "\(logs)")
        // Pruning writes: it is refused as before.
        let prune = try FlowBinary.run(["runs", "--prune", "0", "--state-dir", dir], in: box.root, shellScript: script)
        #expect(prune.status == 2 && prune.stderr.contains("cannot write the journal"), "\(prune)")

        // Runs still in the WAL: read without them, the list would be wrong; it is refused.
        chmod(dir, 0o755)
        _ = try box.run(["run", "demo.yaml", "--output", "prefixed"])
        unlink(dir + "/journal.sqlite-shm")
        chmod(dir, 0o555)
        let stale = try FlowBinary.run(["runs", "--state-dir", dir], in: box.root, shellScript: script)
        #expect(stale.status == 2 && stale.stderr.contains("journal.sqlite-wal"), "\(stale)")
    }

    /// Another program's SQLite database as journal.sqlite where this user cannot write: the
    /// read-only way in skipped the check `open` makes, and `runs`, `show` and `logs` said
    /// SQLite's errors about it (`no such column: kind`, `no such table: runs`). They say it
    /// is not a flow journal (exit 2), and completion lists nothing, quietly. Both read-only
    /// ways: a directory with no room for `-shm`, and a database file that cannot be written.
    /// (Root is not stopped by permissions: it reads as `nobody` here.)
    @Test func aForeignDatabaseThatCannotBeWrittenIsNotAFlowJournal() throws {
        let root = getuid() == 0
        let setpriv = "/usr/bin/setpriv"
        guard !root || FileManager.default.isExecutableFile(atPath: setpriv) else { return }
        let script = root ? "exec \(setpriv) --reuid=65534 --regid=65534 --clear-groups \"$0\" \"$@\"" : "exec \"$0\" \"$@\""
        for (table, readOnlyDirectory) in [("runs (id INTEGER, note TEXT)", true), ("notes (body TEXT)", true),
                                           ("runs (id INTEGER, note TEXT)", false)] {
            let box = try RunSandbox()
            let dir = box.state.path
            try FileManager.default.createDirectory(at: box.state, withIntermediateDirectories: true)
            do {
                let db = try SQLiteConnection(path: dir + "/journal.sqlite")
                try db.execute("CREATE TABLE \(table); INSERT INTO \(table.prefix { $0 != " " }) VALUES (\(table.hasPrefix("runs") ? "1, 'x'" : "'x'"))")
            }
            chmod(box.root.path, 0o755)
            if readOnlyDirectory {
                chmod(dir, 0o555)
            } else {
                chmod(dir, 0o777)
                chmod(dir + "/journal.sqlite", 0o444)
            }
            defer {
                chmod(dir, 0o755)
                chmod(dir + "/journal.sqlite", 0o644)
            }
            // `FlowBinary.run` writes the directory it runs in as `<dir>`.
            let message = "error: <dir>/state/journal.sqlite is not a flow journal (an SQLite database with tables of its own); "
                + "move it away, or use another --state-dir"
            #expect(dir == box.root.path + "/state")
            for command in [["runs"], ["runs", "--json"], ["show", "last"], ["logs", "last"]] {
                let r = try FlowBinary.run(command + ["--state-dir", dir], in: box.root, shellScript: script)
                #expect(r.status == 2, "\(table) \(command): \(r)")
                #expect(r.stderr == message + "\n", "\(table) \(command): \(r)")
            }
            for (query, words) in [("runs", ["show"]), ("run-steps", ["logs", "last"])] {
                let r = try FlowBinary.run(["--complete-values", query, ""] + words + ["--state-dir", dir], in: box.root,
                                           shellScript: script)
                #expect(r.status == 0 && r.stdout.isEmpty && r.stderr.isEmpty, "\(table) \(query): \(r)")
            }
            let db = try SQLiteConnection(path: dir + "/journal.sqlite")
            let tables: Int? = try db.value("SELECT COUNT(*) FROM sqlite_master")
            #expect(tables == 1, "nothing was added to it")
        }
    }

    /// An undo that the journal cannot record is refused before anything runs: its guard
    /// against a second undo reads the journal, so unrecorded it could be run again (it
    /// ran, and again). (Root is not stopped by permissions: it undoes as `nobody` here.)
    @Test func anUndoTheJournalCannotRecordIsRefused() throws {
        let root = getuid() == 0
        let setpriv = "/usr/bin/setpriv"
        guard !root || FileManager.default.isExecutableFile(atPath: setpriv) else { return }
        let box = try RunSandbox()
        try box.write("w.yaml", """
            steps:
              - name: deploy
                shell: echo deployed
                undo:
                  shell: echo UNDO-RAN
            """)
        let run = try box.run(["run", "w.yaml", "--output", "prefixed"])
        #expect(run.status == 0, "\(run)")
        let dir = box.state.path
        do {
            let db = try SQLiteConnection(path: dir + "/journal.sqlite")
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        chmod(box.root.path, 0o777)
        chmod(dir, 0o777)
        chmod(dir + "/journal.sqlite", 0o444)
        defer { chmod(dir + "/journal.sqlite", 0o644) }
        let script = root ? "exec \(setpriv) --reuid=65534 --regid=65534 --clear-groups \"$0\" \"$@\"" : "exec \"$0\" \"$@\""
        for _ in 0..<2 {
            let undo = try FlowBinary.run(["undo", "last", "--output", "prefixed", "--state-dir", dir], in: box.root, shellScript: script)
            #expect(undo.status == 2, "\(undo)")
            #expect(!(undo.stdout + undo.stderr).contains("UNDO-RAN"), "\(undo)")
            #expect(undo.stderr.contains("nothing was undone"), "\(undo)")
        }
    }

    /// A live run is `running` to a user who may read the journal but not write it (another
    /// user's): its lock was tested through a file opened for writing, which that user
    /// cannot open, and every live run read as `interrupted`. (Root is not stopped by
    /// permissions: it reads as `nobody` here.)
    @Test func aLiveRunIsRunningToAUserWhoCannotWriteTheJournal() throws {
        let setpriv = "/usr/bin/setpriv"
        guard getuid() == 0, FileManager.default.isExecutableFile(atPath: setpriv) else { return }
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - name: hang\n    shell: $CHILD --stderr ready --sleep 60\n")
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("hang | ready"), "\(flow.stderr)")
        chmod(box.root.path, 0o755)
        let script = "exec \(setpriv) --reuid=65534 --regid=65534 --clear-groups \"$0\" \"$@\""
        let runs = try FlowBinary.run(["runs", "--json", "--state-dir", box.state.path], in: box.root, shellScript: script)
        #expect(runs.status == 0 && runs.stdout.contains("\"state\": \"running\""), "\(runs)")
        let show = try FlowBinary.run(["show", "last", "--state-dir", box.state.path], in: box.root, shellScript: script)
        #expect(show.status == 0 && show.stdout.contains(" · running\n"), "\(show)")
        flow.signal(SIGTERM)
        #expect(flow.waitExit(timeout: 20) == 128 + SIGTERM)
    }

    /// Another user's state dir that this user may not look into is said to be that, not
    /// "no journal yet". (Root is not stopped by permissions: it reads as `nobody` here.)
    @Test func aStateDirThatCannotBeReadIsNamed() throws {
        let root = getuid() == 0
        let setpriv = "/usr/bin/setpriv"
        guard root, FileManager.default.isExecutableFile(atPath: setpriv) else { return }
        let box = try RunSandbox()
        try box.write("demo.yaml", Self.demo)
        _ = try box.run(["run", "demo.yaml", "--output", "prefixed"])
        let dir = box.state.path
        chmod(box.root.path, 0o755)
        chmod(dir, 0o700)
        let script = "exec \(setpriv) --reuid=65534 --regid=65534 --clear-groups \"$0\" \"$@\""
        let runs = try FlowBinary.run(["runs", "--state-dir", dir], in: URL(fileURLWithPath: "/tmp"), shellScript: script)
        #expect(runs.status == 2, "\(runs)")
        #expect(runs.stderr.contains("cannot read the state dir") && runs.stderr.contains("Permission denied"), "\(runs)")
    }

    /// A state dir whose path goes through a regular file can hold no journal: the history
    /// commands said "no journal in blocker/state/ yet: `flow run` records runs there",
    /// though `flow run` cannot make it there either.
    @Test func aStateDirUnderAFileIsNamed() throws {
        let box = try RunSandbox()
        try box.write("blocker", "a file\n")
        for command in [["runs"], ["show", "last"], ["logs", "last"], ["resume", "last"], ["undo", "last"]] {
            let r = try box.run(command + ["--state-dir", "blocker/state"])
            #expect(r.status == 2, "\(r)")
            #expect(r.stderr == "error: cannot read the state dir blocker/state: Not a directory\n", "\(r)")
        }
    }

    /// A run whose lock file cannot be made (`locks` is not a directory) is not recorded.
    /// It was, without a lock: while it ran, every other `flow` read it as `interrupted`,
    /// and `flow resume` or `flow undo` of it would run its steps beside it.
    @Test func aRunWithoutItsLockFileIsNotRecorded() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "name: ok\nsteps:\n  - shell: echo ok\n")
        #expect(try box.run(["run", "ok.yaml", "--output", "prefixed"]).status == 0)
        let locks = box.state.appendingPathComponent("locks").path
        try FileManager.default.removeItem(atPath: locks)
        try box.write("state/locks", "not a directory\n")
        // The first step's end is recorded before the second starts: by then the journal
        // holds the run, if it is to hold it.
        try box.write("slow.yaml", """
            name: slow
            steps:
              - name: first
                shell: "true"
              - name: wait
                shell: echo waiting; while [ ! -e go ]; do sleep 0.05; done
            """)
        let run = try box.start(["run", "slow.yaml", "--output", "prefixed"])
        #expect(run.waitForLine("wait | waiting"), "the second step runs")
        let runs = try Self.runs(box)
        #expect(runs.map { $0["workflow"] as? String } == ["ok"], "the live run is not there as interrupted: \(runs)")
        _ = try box.write("go", "")
        let ran = try run.finish()
        #expect(ran.status == 0, "\(ran)")
        #expect(ran.stderr.contains("cannot make the run's lock file") && ran.stderr.contains("this run is not recorded"), "\(ran)")
    }

    /// A run that cannot start (no temporary directory for its `FLOW_OUTPUT` files) exits
    /// 2 with nothing run and nothing recorded (it was recorded `interrupted`, exit 1).
    @Test func aRunThatCannotStartIsNotRecorded() throws {
        let box = try RunSandbox()
        try box.write("demo.yaml", Self.demo)
        _ = try box.run(["run", "demo.yaml", "--output", "prefixed"])
        let r = try box.run(["run", "demo.yaml", "--output", "prefixed"], env: ["TMPDIR": "/nonexistent-flow-tmp"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr.contains("cannot create a temporary directory in /nonexistent-flow-tmp") && r.stderr.contains("nothing was run"), "\(r)")
        #expect(!r.stdout.contains("building"), "\(r)")
        let runs = try box.run(["runs"])
        #expect(runs.stdoutLines.count == 2, "the header and the first run only: \(runs)")
    }

    @Test func unwritableStateDirIsReportedAndTheRunStillHappens() throws {
        let box = try RunSandbox()
        try box.write("demo.yaml", Self.demo)
        // A state dir that cannot be created: its parent is a regular file (this also
        // holds for root, whom permissions do not stop).
        try box.write("blocker", "a file\n")
        let stateDir = box.path("blocker/state")
        let failing = try box.run(["run", "demo.yaml", "--output", "prefixed", "--state-dir", stateDir])
        #expect(failing.status == 1, "\(failing)")
        #expect(RunTests.hasLine(failing.stdout, "build | building"), "\(failing)")
        #expect(failing.stderr.contains("not recorded") || failing.stderr.lowercased().contains("journal"), "\(failing)")
        // A state dir that is a file is called that, as `flow runs` calls it (it was
        // "cannot create the state dir FILE/locks: Not a directory").
        let file = try box.run(["run", "demo.yaml", "--output", "prefixed", "--state-dir", "blocker"])
        #expect(file.status == 1 && RunTests.hasLine(file.stdout, "build | building"), "\(file)")
        // A line of its own, not necessarily the first: the journal is opened beside the
        // run's first steps, so under load their status lines may come before it.
        #expect(file.stderr.split(separator: "\n").contains("error: the state dir blocker is not a directory (see --state-dir); this run is not recorded"),
                "\(file)")
        if getuid() != 0 {
            try FileManager.default.createDirectory(at: box.state, withIntermediateDirectories: true)
            try FileManager.default.setAttributes([.posixPermissions: 0o500], ofItemAtPath: box.state.path)
            defer { try? FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: box.state.path) }
            let readOnly = try box.run(["run", "demo.yaml", "--output", "prefixed"])
            #expect(readOnly.status == 1, "\(readOnly)")
            #expect(RunTests.hasLine(readOnly.stdout, "build | building"), "\(readOnly)")
            #expect(!readOnly.stderr.isEmpty)
        }
    }

    @Test func noJournalCreatesNothing() throws {
        let box = try RunSandbox()
        try box.write("demo.yaml", Self.demo)
        let r = try box.run(["run", "demo.yaml", "--output", "prefixed", "--no-journal"])
        #expect(r.status == 1, "\(r)")
        #expect(!FileManager.default.fileExists(atPath: box.state.path), "no state dir")
        #expect(!box.exists(".flow"))
    }

    /// `flow run` starts opening an existing journal before it reads the workflow
    /// (`JournalOpening`): an invalid workflow must still create and record nothing, and
    /// leave the journal usable.
    @Test func invalidWorkflowCreatesAndRecordsNothing() throws {
        let box = try RunSandbox()
        try box.write("bad.yaml", "steps:\n  - shel: \"true\"\n")
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n")
        let first = try box.run(["run", "bad.yaml", "--output", "prefixed"])
        #expect(first.status == 2, "\(first)")
        #expect(!FileManager.default.fileExists(atPath: box.state.path), "no state dir for an invalid workflow")
        let ok = try box.run(["run", "ok.yaml", "--output", "prefixed"])
        #expect(ok.status == 0, "\(ok)")
        let bad = try box.run(["run", "bad.yaml", "--output", "prefixed"])
        #expect(bad.status == 2, "\(bad)")
        let again = try box.run(["run", "ok.yaml", "--output", "prefixed"])
        #expect(again.status == 0, "\(again)")
        let runs = try Self.runs(box)
        #expect(runs.count == 2, "\(runs)")
        #expect(runs.allSatisfy { $0["state"] as? String == "succeeded" }, "\(runs)")
    }

    @Test func defaultStateDirIsDotFlowInTheCurrentDirectory() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n")
        let r = try box.run(["run", "ok.yaml", "--output", "prefixed"], env: ["FLOW_STATE_DIR": ""])
        #expect(r.status == 0, "\(r)")
        #expect(box.exists(".flow/journal.sqlite"), "\(r)")
        #expect(!FileManager.default.fileExists(atPath: box.state.path))
        let runs = try box.run(["runs", "--json"], env: ["FLOW_STATE_DIR": ""])
        #expect(runs.status == 0 && runs.stdout.contains("\"succeeded\""), "\(runs)")
    }

    @Test func pruneKeepsTheNewest() throws {
        let box = try RunSandbox()
        for i in 1...3 {
            try box.write("w\(i).yaml", "name: w\(i)\nsteps:\n  - shell: echo \(i)\n")
            #expect(try box.run(["run", "w\(i).yaml", "--output", "prefixed"]).status == 0)
        }
        let prune = try box.run(["runs", "--prune", "1"])
        #expect(prune.status == 0, "\(prune)")
        #expect(prune.stdout.contains("2"), "\(prune)")
        let runs = try Self.runs(box)
        #expect(runs.count == 1)
        #expect(runs.first?["workflow"] as? String == "w3")
        let files = try FileManager.default.contentsOfDirectory(atPath: box.state.appendingPathComponent("output").path)
        #expect(files == ["\(runs.first?["id"] as? String ?? "?").log"], "the pruned runs' output files are gone: \(files)")
        let logs = try box.run(["show", "last"])
        #expect(logs.status == 0)
    }

    /// A prune that deletes most of the journal gives its space back: SQLite keeps a deleted
    /// row's pages in the file for later rows, so a journal pruned from thousands of runs to
    /// a hundred stayed as large on disk (50,000 runs: 2.3 GB before and after). The runs
    /// kept read as before.
    @Test func aPruneOfMostRunsShrinksTheJournal() throws {
        let box = try RunSandbox()
        var yaml = "name: many\nsteps:\n"
        for i in 0..<200 { yaml += "  - { name: s\(i), print: step \(i) }\n" }
        try box.write("many.yaml", yaml)
        for _ in 0..<5 { #expect(try box.run(["run", "many.yaml", "--output", "prefixed"]).status == 0) }
        func size() -> Int {
            ["journal.sqlite", "journal.sqlite-wal"].reduce(0) { total, name in
                total + ((try? FileManager.default.attributesOfItem(atPath: box.state.appendingPathComponent(name).path)[.size] as? Int) ?? 0)
            }
        }
        let before = size()
        let prune = try box.run(["runs", "--prune", "1"])
        #expect(prune.status == 0 && prune.stdout == "pruned 4 runs\n" && prune.stderr.isEmpty, "\(prune)")
        let after = size()
        #expect(after * 2 < before, "\(before) → \(after) bytes")
        let runs = try Self.runs(box)
        #expect(runs.count == 1 && (runs.first?["counts"] as? [String: Any])?["succeeded"] as? Int == 200, "\(runs)")
        let show = try box.run(["show", "last"])
        #expect(show.status == 0 && show.stdout.contains("s199"), "\(show)")
        // A run recorded after the compaction is recorded as any.
        #expect(try box.run(["run", "many.yaml", "--output", "prefixed"]).status == 0)
        #expect(try Self.runs(box).count == 2)
    }

    /// `runs`, `show` and `logs` read beside a writer, as WAL mode lets them: they took the
    /// write lock at every open (to make the tables of a journal that had them), so while
    /// another process held it (a long prune, a migration, a tool's open transaction) they
    /// waited out the 10 s busy timeout and failed with "stayed locked" (exit 2).
    @Test func historyCommandsReadWhileAnotherProcessWrites() throws {
        let box = try RunSandbox()
        try box.write("demo.yaml", Self.demo)
        #expect(try box.run(["run", "demo.yaml", "--output", "prefixed"]).status == 1)
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try db.execute("BEGIN IMMEDIATE")
        try db.execute("UPDATE runs SET host = host")
        defer { try? db.execute("ROLLBACK") }
        let runs = try box.run(["runs"])
        #expect(runs.status == 0 && runs.stdout.contains("demo"), "\(runs)")
        let show = try box.run(["show", "last", "--json"])
        #expect(show.status == 0 && show.stdout.contains("\"build\""), "\(show)")
        let logs = try box.run(["logs", "last", "build"])
        #expect(logs.status == 0 && logs.stdout.contains("building") && logs.stdout.contains("warn"), "\(logs)")
    }

    /// A disk filled by the runs' output is what `--prune` is for, but deleting their rows
    /// needs room in the WAL first: the prune failed (`the disk holding … is full`, exit 2)
    /// and so did every `flow` after it. The state dir is a 1 MiB tmpfs, mounted in a mount
    /// namespace of the script's own (where user namespaces are not allowed, the test has
    /// nothing to run on and passes).
    @Test func pruneFreesAFullDisk() throws {
        let box = try RunSandbox()
        try box.write("fill.yaml", "name: fill\nsteps:\n  - shell: seq 1 400000\n")
        try box.write("small.yaml", "name: small\nsteps:\n  - shell: echo small\n")
        let script = #"""
            unshare --user --map-root-user --mount true 2>/dev/null || { echo no-namespace; exit 0; }
            exec unshare --user --map-root-user --mount /bin/sh -c '
              mount -t tmpfs -o size=1m tmpfs "$FLOW_STATE_DIR" 2>/dev/null || { echo no-namespace; exit 0; }
              "$0" run fill.yaml --output prefixed >/dev/null 2>fill.err
              grep -q "No space left" fill.err && echo disk-filled
              "$0" runs --prune 0 || exit
              "$0" run small.yaml --output prefixed >/dev/null 2>&1
              "$0" runs
            ' "$0"
            """#
        let r = try FlowBinary.run([], in: box.root, shellScript: script)
        if r.stdout.contains("no-namespace") { return }
        #expect(r.stdout.contains("disk-filled"), "the run filled the disk: \(r)")
        #expect(r.status == 0 && r.stdout.contains("pruned 1 run"), "\(r)")
        // The journal records again: the space is free.
        #expect(r.stdout.contains("succeeded") && r.stdout.contains("small") && !r.stdout.contains("fill "), "\(r)")
    }
    /// A state dir made read-only while a run goes on (once its output file is open): the
    /// run is recorded to its end (SQLite and the output file are written through the files
    /// flow has open), but its lock file cannot be removed and stays, empty and free. Nothing reads it as live, and the first `flow` that can
    /// write the state dir again removes it (its run is in the journal, ended). The state
    /// dir is made read-only by a read-only bind mount over it, in a mount namespace of the
    /// script's own (permissions do not stop root; where user namespaces are not allowed,
    /// the test has nothing to run on and passes).
    @Test func aLockFileLeftByAStateDirMadeReadOnlyIsRemovedOnceItIsWritable() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: ro
            steps:
              - shell: echo one
              - shell: touch started; while [ ! -f go ]; do sleep 0.02; done
              - shell: echo two
            """)
        let script = #"""
            unshare --user --map-root-user --mount true 2>/dev/null || { echo no-namespace; exit 0; }
            exec unshare --user --map-root-user --mount /bin/sh -c '
              "$0" run wf.yaml --output prefixed >run.out 2>&1 &
              flow=$!
              while [ ! -f started ] || [ ! -s "$FLOW_STATE_DIR"/output/*.log ]; do sleep 0.02; done
              mount --bind -o ro "$FLOW_STATE_DIR" "$FLOW_STATE_DIR" 2>/dev/null || { touch go; wait $flow; echo no-namespace; exit 0; }
              touch "$FLOW_STATE_DIR/writable" 2>/dev/null && echo still-writable
              touch go
              wait $flow; echo "run exit $?"
              echo "read-only: $(ls "$FLOW_STATE_DIR/locks")"
              [ -s "$FLOW_STATE_DIR"/locks/*.lock ] || echo "empty lock file"
              "$0" runs
              umount "$FLOW_STATE_DIR" || exit
              "$0" runs >/dev/null || exit
              echo "writable: $(ls "$FLOW_STATE_DIR/locks")"
            ' "$0"
            """#
        let r = try FlowBinary.run([], in: box.root, shellScript: script)
        if r.stdout.contains("no-namespace") { return }
        #expect(!r.stdout.contains("still-writable"), "\(r)")
        #expect(r.stdout.contains("run exit 0\n"), "\(r)")
        let lock = r.stdout.split(separator: "\n").first { $0.hasPrefix("read-only: ") }?.dropFirst("read-only: ".count)
        #expect(lock?.hasSuffix(".lock") == true, "the lock file cannot be removed: \(r)")
        #expect(r.stdout.contains("empty lock file\n"), "\(r)")
        let runID = String(lock?.dropLast(".lock".count) ?? "?")
        #expect(r.stdout.split(separator: "\n").contains { $0.hasPrefix(runID + "  succeeded ") }, "the run reads as ended: \(r)")
        #expect(r.stdout.hasSuffix("writable: \n"), "removed once it can be: \(r)")
    }

    /// A state dir whose journal's full path is longer than SQLite opens (504 bytes: a
    /// `.flow/` deep in a project) is named as such: it said `unable to open database file;
    /// check its permissions`, which sent users to the wrong place. The run goes on
    /// unrecorded, as for any journal that cannot be opened. Found by the hostile-environment
    /// audit (a working directory of 623 bytes).
    @Test func aStateDirTooLongForSQLiteIsNamedAsSuch() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - shell: echo hi\n")
        let deep = Array(repeating: String(repeating: "d", count: 100), count: 5).joined(separator: "/")
        let r = try box.run(["run", "wf.yaml", "--state-dir", deep])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderr.contains("error: cannot open the journal \(deep)/journal.sqlite: its full path is "), "\(r)")
        #expect(r.stderr.contains(" bytes, and SQLite opens no database whose path is longer than 504; use a shorter --state-dir"), "\(r)")
        #expect(!r.stderr.contains("check its permissions"), "\(r)")
    }
}
