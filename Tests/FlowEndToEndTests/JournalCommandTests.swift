import Foundation
import Testing

/// What the journal commands (`runs`, `show`, `logs`, `resume`) tell about a recorded run,
/// checked against what the run itself did: labels, output bytes, durations, counts.
@Suite struct JournalCommandTests {
    /// `flow show RUN --json`'s steps, by path.
    static func steps(_ box: RunSandbox, sourceLocation: SourceLocation = #_sourceLocation) throws -> [String: [String: Any]] {
        let run = try JournalEndToEndTests.show(box, sourceLocation: sourceLocation)
        var steps: [String: [String: Any]] = [:]
        for step in (run["steps"] as? [[String: Any]]) ?? [] {
            if let path = step["path"] as? String { steps[path] = step }
        }
        return steps
    }

    /// `flow show` of a resumed run gave its reused steps as if run now (`exit 0 · 0.0s`,
    /// no marker) while the live output said `reused from run ID`: the text and the JSON
    /// (`reused_from`) now say where their result came from, without the instant's duration.
    @Test func showOfAResumeSaysWhereReusedStepsCameFrom() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: resumed
            steps:
              - name: fetch
                shell: echo "v=1" >> "$FLOW_OUTPUT"
              - name: gate
                shell: test -f go
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let firstID = try #require(try JournalEndToEndTests.runs(box).first?["id"] as? String)
        try box.write("go", "")
        #expect(try box.run(["resume", "last", "--output", "prefixed"]).status == 0)
        let text = try box.run(["show", "last"])
        #expect(text.status == 0, "\(text)")
        #expect(text.stdoutLines.contains("✓ fetch  [succeeded · reused from run \(firstID) · exit 0 · outputs v]"), "\(text)")
        let gate = try #require(text.stdoutLines.first { $0.hasPrefix("✓ gate  [") }, "\(text)")
        #expect(gate.hasPrefix("✓ gate  [succeeded · exit 0 · ") && !gate.contains("reused"), "ran now: \(gate)")
        let steps = try Self.steps(box)
        #expect(steps["1"]?["reused_from"] as? String == firstID, "\(steps)")
        #expect(steps["2"]?["reused_from"] is NSNull, "\(steps)")
        // The run that ran them has nothing reused.
        let first = try JournalEndToEndTests.show(box, firstID)
        let firstSteps = (first["steps"] as? [[String: Any]]) ?? []
        #expect(firstSteps.count == 2 && firstSteps.allSatisfy { $0["reused_from"] is NSNull }, "\(first)")
    }

    @Test(arguments: ["0", "-1"])
    func runsLimitBelowOneIsAUsageError(_ value: String) throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n")
        #expect(try box.run(["run", "ok.yaml", "--output", "prefixed"]).status == 0)
        let r = try box.run(["runs", "--limit", value])
        #expect(r.status == 2, "\(r)")
        #expect(r.stdout.isEmpty, "no table, and no \"no runs recorded\": \(r)")
        #expect(r.stderr.contains("--limit") && r.stderr.contains(value), "\(r)")
        #expect(try box.run(["runs", "--limit", "1"]).stdout.contains("succeeded"))
    }

    /// `flow show lsat` said "no run `lsat` in .flow/ (see `flow runs`)": true, but the
    /// typo was in `last`. Run ids are hexadecimal, so a word a typo away from `last` gets
    /// "did you mean `last`?"; nothing is undone or resumed.
    @Test(arguments: [["show", "lsat"], ["logs", "las"], ["undo", "Last"], ["resume", "lats"]])
    func aTypoOfLastSaysDidYouMean(_ arguments: [String]) throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n    undo:\n      shell: touch undone\n")
        #expect(try box.run(["run", "ok.yaml", "--output", "prefixed"]).status == 0)
        let r = try box.run(arguments)
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr == "error: no run `\(arguments[1])` in \(box.state.path)/ (did you mean `last`?)\n", "\(r)")
        #expect(!box.exists("undone"))
        let other = try box.run(["show", "zzzz"])
        #expect(other.stderr == "error: no run `zzzz` in \(box.state.path)/ (see `flow runs`)\n", "\(other)")
    }

    /// An empty run id is refused: as a prefix it matched every run, so with one run
    /// recorded `flow show ""` showed it and `flow undo ""` would have rolled it back.
    @Test(arguments: [["show", ""], ["logs", ""], ["undo", ""], ["resume", ""]])
    func anEmptyRunIDNamesNoRun(_ arguments: [String]) throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n    undo:\n      shell: touch undone\n")
        #expect(try box.run(["run", "ok.yaml", "--output", "prefixed"]).status == 0)
        let r = try box.run(arguments)
        #expect(r.status == 2, "\(r)")
        #expect(r.stdout.isEmpty, "\(r)")
        #expect(r.stderr == "error: an empty run id names no run (give an id, a prefix of one, or `last`)\n", "\(r)")
        #expect(!box.exists("undone"))
    }

    /// What the user typed comes back in messages with its control characters escaped (an
    /// ESC in a run id, a step or a state dir does not reach the terminal), and a state
    /// dir that is a file is called that.
    @Test func journalMessagesEscapeWhatTheyQuote() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - name: a\n    shell: \"true\"\n")
        #expect(try box.run(["run", "ok.yaml", "--output", "prefixed"]).status == 0)
        let run = try box.run(["show", "x\u{1B}[31m"])
        #expect(run.status == 2 && run.stderr.hasPrefix("error: no run `x\\u{1B}[31m` in "), "\(run)")
        let step = try box.run(["logs", "last", "b\u{1B}[31m"])
        #expect(step.status == 2 && step.stderr.hasSuffix(" has no step `b\\u{1B}[31m`\n"), "\(step)")
        let dir = try box.run(["runs"], env: ["FLOW_STATE_DIR": box.path("no\nwhere")])
        #expect(dir.status == 2 && dir.stderr.contains("no\\u{A}where/ yet"), "\(dir)")
        try box.write("file", "")
        let file = try box.run(["runs", "--state-dir", "file"])
        #expect(file.status == 2 && file.stderr == "error: the state dir file is not a directory (see --state-dir)\n", "\(file)")
    }

    /// A state dir that is a symbolic link to nothing is named as one, with its target,
    /// by `run` and the history commands alike: `run` said it could not create
    /// `LINK/locks` ("no such file or directory"), and `runs` sent the user to `flow run`.
    /// The target is not made (as `mkdir -p` and git do not).
    @Test func aDanglingStateDirLinkIsNamedWithItsTarget() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - name: a\n    shell: \"true\"\n")
        try FileManager.default.createSymbolicLink(atPath: box.path("st"), withDestinationPath: box.path("gone"))
        let message = "error: the state dir st is a symbolic link to \(box.path("gone")), which does not exist (see --state-dir)"
        let run = try box.run(["run", "ok.yaml", "--output", "prefixed", "--state-dir", "st"])
        #expect(run.status == 0 && run.stderr.contains(message + "; this run is not recorded\n"), "\(run)")
        for command in [["runs"], ["show", "last"], ["resume", "last"]] {
            let result = try box.run(command + ["--state-dir", "st"])
            #expect(result.status == 2 && result.stderr == message + "\n", "\(command): \(result)")
        }
        #expect(!box.exists("gone"))
    }

    /// A state dir given with a trailing slash is the same dir, and messages name its files
    /// with one slash.
    @Test func aTrailingSlashOfTheStateDirIsDropped() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n")
        let none = try box.run(["runs", "--state-dir", "st//"])
        #expect(none.status == 2 && none.stderr.contains("st/ yet") && !none.stderr.contains("//"), "\(none)")
        #expect(try box.run(["run", "ok.yaml", "--output", "prefixed", "--state-dir", "st/"]).status == 0)
        let runs = try box.run(["runs", "--state-dir", "st"])
        #expect(runs.status == 0 && runs.stdout.contains("succeeded"), "\(runs)")
    }

    /// `flow logs` prints the lines as the step printed them: a CRLF line keeps its `\r`
    /// (the terminal and the .log file got it), and bytes that are not UTF-8 stay as they were.
    @Test func logsKeepCarriageReturnsAndBytesThatAreNotUTF8() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: crlf
                shell: printf 'one\\r\\ntwo\\r\\n'
              - name: latin1
                shell: printf 'caf\\351\\n'
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 0, "\(run)")
        let crlf = try box.run(["logs", "last", "crlf"])
        #expect(crlf.status == 0, "\(crlf)")
        #expect(crlf.stdoutBytes == Array("one\r\ntwo\r\n".utf8), "\(crlf.stdoutBytes)")
        let latin1 = try box.run(["logs", "last", "latin1"])
        #expect(latin1.stdoutBytes == Array("caf".utf8) + [0xE9, 0x0A], "\(latin1.stdoutBytes)")
        let all = try box.run(["logs", "last"])
        #expect(all.stdoutBytes == Array("crlf   | one\r\ncrlf   | two\r\nlatin1 | caf".utf8) + [0xE9, 0x0A], "\(all)")
    }

    /// An undone step's duration is its own run time; the rollback that undid it later is
    /// shown on its undo step.
    @Test func anUndoneStepsDurationIsItsOwnRunTime() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: quick
                shell: "true"
                undo:
                  shell: sleep 0.5
              - shell: exit 3
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let steps = try Self.steps(box)
        #expect(steps["1"]?["state"] as? String == "undone", "\(steps)")
        let own = try #require(steps["1"]?["duration_seconds"] as? Double, "\(steps)")
        let undo = try #require(steps["1.u1"]?["duration_seconds"] as? Double, "\(steps)")
        #expect(undo >= 0.5, "\(steps)")
        #expect(own < undo, "quick's duration (\(own)s) does not include its rollback (\(undo)s)")
    }

    /// The count `resume` announces is the steps it will not run again: not the undo steps
    /// of the rollback, not the steps they undid, not the `finally` steps (which run again).
    @Test func resumeCountsOnlyTheStepsItReuses() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: kept
                shell: echo kept >> log
              - name: reverted
                shell: echo reverted >> log
                undo:
                  shell: echo unreverted >> log
              - name: gate
                shell: test -f go
            finally:
              - shell: echo finally >> log
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        #expect(box.lines("log") == ["kept", "reverted", "finally", "unreverted"])
        try box.write("go", "")
        let resumed = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(resumed.stderrLines.first?.hasSuffix(": 1 step already succeeded") == true, "\(resumed)")
        #expect(box.lines("log") == ["kept", "reverted", "finally", "unreverted", "reverted", "finally"],
                "only `kept` was not run again")
    }

    static let labelled = """
        steps:
          - sequential:
              - shell: echo in-group
              - name: named
                shell: echo named-line
          - shell: echo plain
            undo:
              shell: echo undo-plain
          - shell: exit 3
        finally:
          - print: bye
        """

    /// `show` marks the steps of a `finally` list, a group's and the workflow's, as it marks
    /// those of an `undo`: after a failure they follow a row of skipped steps, and read as
    /// steps of the group they looked as if they had run out of turn. The steps inside a
    /// `finally` group are not marked again.
    @Test func showMarksTheStepsOfAFinally() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                sequential:
                  - shell: exit 1
                  - shell: echo never
                finally:
                  - name: tidy
                    shell: echo tidy
            finally:
              - sequential:
                  - print: bye
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 1, "\(run)")
        let show = try box.run(["show", "last"])
        #expect(show.status == 0, "\(show)")
        let rows = show.stdoutLines.dropFirst(2).map { $0.replacing(#/  \[.*\]$/#, with: "") }
        #expect(Array(rows) == [
            "✗ g", "  ✗ shell@1.1: exit 1", "  ○ shell@1.2: echo never", "  ✓ finally tidy",
            "✓ finally sequential@f1", "  ✓ print@f1.1: bye", "steps: 2 succeeded, 1 failed, 1 skipped",
        ], "\(show)")
    }

    /// `logs` labels lines as the live run did, and `show` uses the same labels, which
    /// `logs` accepts as step selectors (as it does names and paths).
    @Test func journalCommandsUseTheLiveLabels() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.labelled)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == 1, "\(run)")
        let live = run.stdoutLines.map(LiveFlow.squeeze)
        #expect(live.contains("shell@2.u1 | undo-plain") && live.contains("print@f1 | bye"), "\(run)")
        let logs = try box.run(["logs", "last"])
        #expect(logs.status == 0, "\(logs)")
        // Padded alike too: the same lines, byte for byte (they were not padded before).
        #expect(logs.stdoutLines.sorted() == run.stdoutLines.sorted(), "\(logs)\n--- live\n\(run)")

        let show = try box.run(["show", "last"])
        #expect(show.status == 0, "\(show)")
        for line in ["✓ sequential@1 ", "✓ shell@1.1: echo in-group ", "✓ named ", "↺ shell@2: echo plain ",
                     "✓ undo shell@2.u1: echo undo-plain ", "✗ shell@3: exit 3 ", "✓ finally print@f1: bye "] {
            #expect(show.stdoutLines.contains { $0.trimmingCharacters(in: .whitespaces).hasPrefix(line) }, "\(line): \(show)")
        }
        #expect(!show.stdout.contains("print: print"), "\(show)")
        let json = try Self.steps(box)
        #expect(json["2.u1"]?["label"] as? String == "shell@2.u1", "\(json)")

        for selector in ["shell@1.1", "1.1"] {
            let one = try box.run(["logs", "last", selector])
            #expect(one.status == 0 && one.stdout == "in-group\n", "\(selector): \(one)")
        }
        let group = try box.run(["logs", "last", "sequential@1"])
        #expect(group.stdoutLines == ["shell@1.1  | in-group", "named      | named-line"], "\(group)")
        #expect(try box.run(["logs", "last", "named"]).stdout == "named-line\n")
        #expect(try box.run(["logs", "last", "shell@2.u1"]).stdout == "undo-plain\n")
        let unknown = try box.run(["logs", "last", "shell@9"])
        #expect(unknown.status == 2 && unknown.stderr.contains("shell@9"), "\(unknown)")
    }

    /// Under a selection, `logs` pads labels to the selected steps', as the live output
    /// did: it padded to every step of the run (`build    | building`), the unselected
    /// `print@f1` and the steps inside an unselected group and their undo steps included.
    @Test func logsPadsLabelsToTheSelectedStepsAsTheLiveRunDid() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: echo building
                tags: [b]
              - name: a-group-left-out
                sequential:
                  - name: a-long-step-left-out
                    shell: echo never
                    undo:
                      - shell: echo never-undone
            finally:
              - print: x
            """)
        for selection in [["--only", "build"], ["--tags", "b"]] {
            let run = try box.run(["run", "wf.yaml", "--output", "prefixed"] + selection)
            #expect(run.status == 0, "\(run)")
            let logs = try box.run(["logs", "last"])
            #expect(logs.status == 0 && logs.stdout == run.stdout, "\(selection): \(logs)\n--- live\n\(run)")
        }
        #expect(try box.run(["logs", "last", "build"]).stdout == "building\n")
    }

    /// The attempts of a step that ran more than once, by its own `retry` or its group's,
    /// are told apart wherever its output is replayed, by one line before each later
    /// attempt's output: `flow logs`, the replay of failed steps (`prefixed`, `tty`) and
    /// JUnit's `<system-out>`. They ran together, so two failures read as one.
    @Test func theAttemptsOfAStepAreMarkedWhereverItsOutputIsReplayed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: flaky
                shell: echo "try$(cat n)"; echo x >> n; exit 1
                retry: 1
              - name: grp
                if: always()
                retry: 1
                sequential:
                  - name: inner
                    shell: echo "go$(cat m)"; echo x >> m; exit 2
            """)
        func reset() throws {
            try box.write("n", "")
            try box.write("m", "")
        }
        try reset()
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(run.status == 1, "\(run)")
        #expect(run.stderr.contains("── output of flaky ──\ntry\n── attempt 2 ──\ntryx\n── output of inner ──\ngo\n── attempt 2 ──\ngox\n"),
                "\(run)")
        #expect(try box.run(["logs", "last", "flaky"]).stdout == "try\n── attempt 2 ──\ntryx\n")
        #expect(try box.run(["logs", "last", "inner"]).stdout == "go\n── attempt 2 ──\ngox\n")
        #expect(try box.run(["logs", "last", "grp"]).stdout == "inner | go\ninner | ── attempt 2 ──\ninner | gox\n")
        let report = box.read("report.xml") ?? ""
        #expect(report.contains("<system-out>try\n── attempt 2 ──\ntryx\n</system-out>"), "\(report)")
        #expect(report.contains("<system-out>go\n── attempt 2 ──\ngox\n</system-out>"), "\(report)")
        if pseudoTerminalsAvailable {
            try reset()
            let tty = try TerminalRun(box, ["run", "wf.yaml", "--output", "tty", "--no-journal"], rows: 30, columns: 80)
            #expect(tty.finish() == 1, "\(tty.report)")
            let shown = String(decoding: tty.bytes, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
            #expect(shown.contains("── output of flaky ──\ntry\n── attempt 2 ──\ntryx\n"), "\(tty.report)")
        }
    }

    /// An undo step runs once per success of its step it reverses (a retried group's step
    /// succeeds once per attempt), and those runs are not attempts of one another: the
    /// next one's output has no mark, though the previous one's retry printed nothing. It
    /// got that retry's `── attempt 2 ──`, left due, in `flow logs`.
    @Test func anUndoStepsNextReversalIsNotMarkedWithAnEarlierRetry() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: outer
                retry: 1
                sequential:
                  - name: a
                    shell: "true"
                    undo:
                      - shell: if [ ! -f u1 ]; then touch u1; exit 1; fi; if [ ! -f u2 ]; then touch u2; exit 0; fi; echo earlier
                        retry: 1
                  - { name: flaky, shell: exit 1 }
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(run.status == 1, "\(run)")
        // `a` holds its undo step: its lines carry their label.
        #expect(try box.run(["logs", "last", "a"]).stdout == "shell@1.1.u1 | earlier\n")
        let report = box.read("report.xml") ?? ""
        #expect(!report.contains("── attempt"), "\(report)")
    }

    /// A name that several steps share (inside an action used twice) is refused as STEP,
    /// with the paths to choose from; a path picks one.
    @Test func logsRefusesANameSeveralStepsShare() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              act:
                steps:
                  - { name: inact, shell: echo in-act }
            steps:
              - use: act
              - use: act
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let both = try box.run(["logs", "last", "inact"])
        #expect(both.status == 2, "\(both)")
        #expect(both.stderr.contains("give one by its path: 1.1, 2.1"), "\(both)")
        let one = try box.run(["logs", "last", "2.1"])
        #expect(one.status == 0 && one.stdout == "in-act\n", "\(one)")
    }

    /// A monorepo's `check` action used as `alpha`, `beta` and `gamma`: `flow logs last
    /// test` listed the paths `1.1.2, 1.2.2, 1.3.2`, which did not say which package's
    /// `test` each was. Each path now names the nearest named step around it.
    @Test func logsNamesTheGroupOfEachStepSharingAName() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              check:
                params:
                  pkg: { required: true }
                steps:
                  - name: test
                    shell: echo "testing ${{ params.pkg }}"
            steps:
              - name: checks
                concurrent:
                  - { use: check, name: alpha, with: { pkg: alpha } }
                  - { use: check, name: beta, with: { pkg: beta } }
              - use: check
                with: { pkg: gamma }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let all = try box.run(["logs", "last", "test"])
        #expect(all.status == 2, "\(all)")
        #expect(all.stderr.hasSuffix("give one by its path: 1.1.1 (in alpha), 1.2.1 (in beta), 2.1\n"), "\(all)")
        let beta = try box.run(["logs", "last", "1.2.1"])
        #expect(beta.status == 0 && beta.stdout == "testing beta\n", "\(beta)")
    }

    /// Every step state is in the counts of `runs` and `show`, as in their `--json`: a step
    /// flow was killed while undoing was left out (`1 failed` for two steps). In the run
    /// its death interrupted, that step reads `undo_interrupted`, not `undoing`.
    @Test func countsShowEveryState() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: deployed
                shell: "true"
                undo:
                  shell: kill -KILL $PPID
              - shell: exit 3
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 128 + SIGKILL)
        let json = try JournalEndToEndTests.runs(box)
        #expect(json.first?["counts"] as? [String: Int] == ["failed": 1, "undo_interrupted": 1], "\(json)")
        let runs = try box.run(["runs"])
        #expect(runs.status == 0 && runs.stdoutLines.last?.hasSuffix("  1 failed, 1 undo_interrupted") == true, "\(runs)")
        let show = try box.run(["show", "last"])
        #expect(show.status == 0 && show.stdoutLines.last == "steps: 1 failed, 1 undo_interrupted", "\(show)")
    }

    /// So is a group whose `undo` flow was killed in: `undo_interrupted`, counted as a group
    /// whose undo failed is (it was left out: `1 succeeded, 1 failed` of a run whose `show`
    /// had the group `undo_interrupted`).
    @Test func countsShowAGroupWhoseUndoWasCutShort() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                sequential:
                  - { name: made, shell: "true" }
                undo:
                  shell: kill -KILL $PPID
              - shell: exit 3
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 128 + SIGKILL)
        let json = try JournalEndToEndTests.runs(box)
        #expect(json.first?["counts"] as? [String: Int] == ["succeeded": 1, "failed": 1, "undo_interrupted": 1], "\(json)")
        let runs = try box.run(["runs"])
        #expect(runs.status == 0 && runs.stdoutLines.last?.hasSuffix("  1 succeeded, 1 failed, 1 undo_interrupted") == true, "\(runs)")
        let show = try box.run(["show", "last"])
        #expect(show.status == 0 && show.stdoutLines.last == "steps: 1 succeeded, 1 failed, 1 undo_interrupted", "\(show)")
        #expect(show.stdoutLines.contains { $0.hasPrefix("⚡ g  [undo_interrupted") }, "\(show)")
    }

    /// A group that its own timeout ended counts once as `timed_out` in the history, as in
    /// the run's summary (the history named no failure of the failed run: its steps are
    /// only `cancelled` and `skipped`).
    @Test func aGroupsTimeoutCountsInTheHistoryAsInTheSummary() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: bounded
                timeout: 200ms
                continue_on_error: true
                sequential:
                  - shell: sleep 30
                  - print: after
              - name: inner
                sequential:
                  - shell: sleep 30
                    timeout: 200ms
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        // `bounded`'s time-out was allowed (`continue_on_error`); the history counts it as
        // the state it is, and says it was allowed as the summary does (docs/journal.md).
        #expect(run.status == 1 && run.stderr.contains("failed: 2 timed_out (1 allowed), 1 cancelled, 1 skipped"), "\(run)")
        let json = try JournalEndToEndTests.runs(box)
        #expect(json.first?["counts"] as? [String: Int] == ["timed_out": 2, "cancelled": 1, "skipped": 1], "\(json)")
        #expect(json.first?["allowed_failures"] as? [String: Int] == ["timed_out": 1], "\(json)")
        let show = try box.run(["show", "last"])
        #expect(show.stdoutLines.last == "steps: 2 timed_out (1 allowed), 1 cancelled, 1 skipped", "\(show)")
    }

    /// `show --json` says of the run what `runs --json` says (its start, end, duration,
    /// parent and counts, which the text shows and the JSON lacked), then its steps.
    @Test func showJSONHasTheRunAsRunsJSONHasIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - name: a\n    shell: \"true\"\n  - name: b\n    shell: test -f ok\n")
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        try box.write("ok", "")
        #expect(try box.run(["resume", "last", "--output", "prefixed"]).status == 0)
        let runs = try JournalEndToEndTests.runs(box)
        let show = try JournalEndToEndTests.show(box)
        #expect(show["parent_id"] as? String == runs.last?["id"] as? String, "\(show)")
        for key in ["id", "kind", "state", "workflow", "file", "started_at", "ended_at", "duration_seconds", "exit_status",
                    "parent_id"] {
            #expect(show[key].map { "\($0)" } == runs.first?[key].map { "\($0)" }, "\(key): \(show) vs \(runs)")
        }
        #expect(show["counts"] as? [String: Int] == ["succeeded": 2], "\(show)")
        #expect((show["steps"] as? [[String: Any]])?.count == 2, "\(show)")
    }

    /// `runs` and `show` say which action a run ran and `show` what it was run with (its
    /// vars, params, selection): an action's runs read as the workflow's, and a run with
    /// `--var target=prod` as one with the defaults.
    @Test func runsAndShowSayTheActionAndArguments() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: proj
            vars: { target: dev }
            steps:
              - shell: echo "${{ vars.target }}"
            actions:
              release:
                params: { version: {} }
                steps:
                  - shell: echo "${{ params.version }}"
            """)
        #expect(try box.run(["run", "wf.yaml", "release", "--with", "version=1.2 rc", "--var", "target=prod"]).status == 0)
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.first?["action"] as? String == "release", "\(runs)")
        let show = try JournalEndToEndTests.show(box)
        #expect(show["action"] as? String == "release", "\(show)")
        let text = try box.run(["show", "last"])
        let id = try #require(runs.first?["id"] as? String)
        #expect(text.stdoutLines.first?.hasPrefix("run \(id) · proj · action release (wf.yaml) · succeeded") == true, "\(text)")
        #expect(text.stdoutLines.contains("arguments: release --var target=prod --with 'version=1.2 rc'"), "\(text)")
        let listed = try box.run(["runs"])
        #expect(listed.stdoutLines.contains { $0.hasPrefix(id) && $0.contains("proj · action release") }, "\(listed)")
        // A run of the workflow itself, without arguments, has no action and no such line.
        #expect(try box.run(["run", "wf.yaml"]).status == 0)
        #expect(try JournalEndToEndTests.runs(box).first?["action"] is NSNull)
        #expect(!(try box.run(["show", "last"])).stdoutLines.contains { $0.hasPrefix("arguments:") })
    }

    /// `flow runs` lines its columns up on a terminal: a workflow named after its file
    /// (`构建.yaml`, no `name`) takes two columns a character, and STEPS used to start two
    /// columns further right on its line per such character.
    @Test func runsAlignsWideWorkflowNames() throws {
        let box = try RunSandbox()
        try box.write("构建.yaml", "steps:\n  - shell: \"true\"\n")
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n")
        #expect(try box.run(["run", "构建.yaml"]).status == 0)
        #expect(try box.run(["run", "ok.yaml"]).status == 0)
        let listed = try box.run(["runs"])
        #expect(listed.stdoutLines.count == 3, "\(listed)")
        // The column STEPS starts at, in terminal columns (a CJK character is two).
        func stepsColumn(_ line: String, _ cell: String) -> Int? {
            guard let range = line.range(of: cell) else { return nil }
            return line[..<range.lowerBound].unicodeScalars.reduce(0) { $0 + ((0x4E00...0x9FFF).contains($1.value) ? 2 : 1) }
        }
        let columns = zip(listed.stdoutLines, ["STEPS", "1 succeeded", "1 succeeded"]).map { stepsColumn($0, $1) }
        #expect(columns[0] != nil && Set(columns).count == 1, "\(columns): \(listed)")
    }

    /// `runs --prune N --json` prints JSON (it printed `pruned 1 run`), and `--limit`, which
    /// pruning ignored, is refused with it; a negative KEEP is named in its refusal.
    @Test func pruneAnswersJSONAndRefusesLimit() throws {
        let box = try RunSandbox()
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n")
        for _ in 0..<2 { #expect(try box.run(["run", "ok.yaml", "--output", "prefixed"]).status == 0) }
        let negative = try box.run(["runs", "--prune=-3"])
        #expect(negative.status == 2 && negative.stderr.hasPrefix("Error: --prune must be 0 or more (got -3)\n"), "\(negative)")
        let limited = try box.run(["runs", "--prune", "0", "--limit", "1"])
        #expect(limited.status == 2 && limited.stderr.contains("--limit"), "\(limited)")
        #expect(try JournalEndToEndTests.runs(box).count == 2, "nothing was pruned")
        let pruned = try box.run(["runs", "--prune", "1", "--json"])
        #expect(pruned.status == 0, "\(pruned)")
        let object = try JSONSerialization.jsonObject(with: Data(pruned.stdout.utf8)) as? [String: Any]
        #expect(object?["pruned"] as? Int == 1, "\(pruned)")
        #expect(try JournalEndToEndTests.runs(box).count == 1)
    }

    /// A step killed by a signal is shown as the live output showed it, `signal 15`, not as
    /// `exit 143` (the shell's number for it), and `--json` has the signal: in a run that
    /// ended, and in one that was killed (read from its transitions).
    @Test(arguments: [false, true])
    func aSignalledStepIsShownWithItsSignal(_ killed: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: termed
                continue_on_error: true
                shell: kill -TERM $$
              - shell: \(killed ? "kill -KILL $PPID" : "echo done")
            """)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.status == (killed ? 128 + SIGKILL : 0), "\(run)")
        if !killed { #expect(run.stderr.contains("✗ termed signal 15"), "\(run)") }
        let show = try box.run(["show", "last"])
        #expect(show.stdoutLines.contains { $0.hasPrefix("✗ termed  [failed (allowed to fail) · signal 15 · ") }, "\(show)")
        let steps = try Self.steps(box)
        #expect(steps["1"]?["signal"] as? Int == 15 && steps["1"]?["exit_code"] as? Int == 143, "\(steps)")
        #expect(steps["2"]?["signal"] is NSNull, "\(steps)")
    }

    /// An undo run: `show` draws its groups as the tree's frame (it runs none: `[pending]`
    /// said they were left to run), and `undo` of it names the run it undid.
    @Test func anUndoRunShowsItsGroupsAsAFrameAndIsNotUndone() throws {
        let box = try RunSandbox()
        try box.write("u.yaml", """
            steps:
              - name: g
                sequential:
                  - name: a
                    shell: "true"
                    undo:
                      shell: "true"
                  - name: b
                    shell: "true"
            """)
        #expect(try box.run(["run", "u.yaml", "--output", "prefixed"]).status == 0)
        let runs = try JSONSerialization.jsonObject(with: Data(try box.run(["runs", "--json"]).stdout.utf8)) as? [[String: Any]]
        let original = try #require(runs?.first?["id"] as? String)
        #expect(try box.run(["undo", "last", "--output", "prefixed"]).status == 0)
        let show = try box.run(["show", "last"])
        #expect(show.status == 0, "\(show)")
        let lines = show.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains("· g"), "\(show)")
        #expect(!show.stdout.contains("[pending]"), "\(show)")
        #expect(lines.contains { $0.hasPrefix("  ↺ a  [undone") }, "\(show)")
        let again = try box.run(["undo", "last"])
        #expect(again.status == 2, "\(again)")
        #expect(again.stderr.contains("is itself an undo (of run \(original): 1 undone); an undo is not undone"), "\(again)")

        let age = try box.run(["runs", "--prune-older-than", "99999999d"])
        #expect(age.status == 2 && age.stderr.contains("at most 41666d"), "\(age)")
        #expect(try box.run(["runs", "--prune-older-than", "41666d"]).status == 0)
    }

    /// `last` is the newest run for every command: right after `flow undo`, the undo. A
    /// second `flow undo last` said only that an undo is not undone (and to run the
    /// workflow again). It says now that `last` is that undo, which run it undid and what it
    /// did, and the command to type: `flow undo R --force` to reverse R's steps again after
    /// an undo that succeeded, `flow undo R` after one that left something.
    @Test func undoLastAfterAnUndoSaysWhatToTypeInstead() throws {
        let box = try RunSandbox()
        try box.write("u.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  shell: test -f fail-undo && exit 3 || true
              - name: b
                shell: "true"
                undo:
                  shell: "true"
            """)
        #expect(try box.run(["run", "u.yaml", "--output", "prefixed"]).status == 0)
        let runs = try JSONSerialization.jsonObject(with: Data(try box.run(["runs", "--json"]).stdout.utf8)) as? [[String: Any]]
        let original = try #require(runs?.first?["id"] as? String)
        #expect(try box.run(["undo", "last", "--output", "prefixed"]).status == 0)
        let undoID = try #require((try JSONSerialization.jsonObject(with: Data(try box.run(["runs", "--json"]).stdout.utf8))
                as? [[String: Any]])?.first?["id"] as? String)
        let again = try box.run(["undo", "last"])
        #expect(again.status == 2, "\(again)")
        #expect(again.stderrLines == [
            "error: `last` is run \(undoID), the newest run, which is itself an undo (of run \(original): 2 undone); an undo is not undone",
            "help: to reverse run \(original)'s steps again: \(FlowOutcome.flowInHint) undo \(original) --force; to do them again, run the workflow again",
        ], "\(again)")
        // The command it gives does what it says.
        try box.write("fail-undo", "")
        let forced = try box.run(["undo", original, "--force", "--output", "prefixed"])
        #expect(forced.status == 1, "a's undo fails now: \(forced)")
        let forcedID = try #require((try JSONSerialization.jsonObject(with: Data(try box.run(["runs", "--json"]).stdout.utf8))
                as? [[String: Any]])?.first?["id"] as? String)
        let left = try box.run(["undo", "last"])
        #expect(left.status == 2, "\(left)")
        #expect(left.stderrLines == [
            "error: `last` is run \(forcedID), the newest run, which is itself an undo (of run \(original): 1 undone, 1 undo_failed); an undo is not undone",
            "help: to undo what run \(original) has left: \(FlowOutcome.flowInHint) undo \(original)",
        ], "\(left)")
        // By its id, the same without `last`.
        let byID = try box.run(["undo", forcedID])
        #expect(byID.stderrLines.first == "error: run \(forcedID) is itself an undo (of run \(original): 1 undone, 1 undo_failed); an undo is not undone",
                "\(byID)")
    }

    /// An undo a first SIGINT cancelled goes on with its rollback to its end: `cancelled`,
    /// with every step `undone`, it left nothing. A second `flow undo last` told to type the
    /// plain `flow undo R`, which was refused (`already undone`, exit 2); it gives the
    /// `--force`, as after an undo that succeeded, and so does `flow resume` of that undo.
    @Test func undoLastAfterACancelledUndoThatReversedEverythingGivesTheForce() throws {
        let box = try RunSandbox()
        try box.write("u.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  shell: echo ready >&2; while [ ! -e go ]; do sleep 0.01; done
            """)
        #expect(try box.run(["run", "u.yaml", "--output", "prefixed"]).status == 0)
        let original = try #require((try JSONSerialization.jsonObject(with: Data(try box.run(["runs", "--json"]).stdout.utf8))
                as? [[String: Any]])?.first?["id"] as? String)
        let undo = try box.start(["undo", original, "--output", "prefixed"])
        #expect(undo.waitForLine("shell@1.u1 | ready"), "\(undo.stderr)")
        undo.signal(SIGINT)
        #expect(undo.waitFor { _, err in err.contains("the rollback goes on to its end") }, "\(undo.stderr)")
        try box.write("go", "")
        let cancelled = try undo.finish(timeout: 30)
        #expect(cancelled.status == 130, "\(cancelled)")
        let undoID = try #require((try JSONSerialization.jsonObject(with: Data(try box.run(["runs", "--json"]).stdout.utf8))
                as? [[String: Any]])?.first?["id"] as? String)
        let again = try box.run(["undo", "last"])
        #expect(again.status == 2, "\(again)")
        #expect(again.stderrLines == [
            "error: `last` is run \(undoID), the newest run, which is itself an undo (of run \(original): 1 undone); an undo is not undone",
            "help: to reverse run \(original)'s steps again: \(FlowOutcome.flowInHint) undo \(original) --force; to do them again, run the workflow again",
        ], "\(again)")
        let resume = try box.run(["resume", undoID])
        #expect(resume.stderrLines.first == "error: run \(undoID) is an undo; run `flow undo \(original) --force` again instead", "\(resume)")
        // The plain undo is what is refused.
        let plain = try box.run(["undo", original])
        #expect(plain.status == 2 && plain.stderr.contains("was already undone by run \(undoID)"), "\(plain)")
    }

    /// Once `runs --prune` has deleted the run an undo undid, a second `flow undo last`
    /// (and `flow resume` of that undo) gave a command for that run, which was refused
    /// (`no run R`): they say it is gone, and give none.
    @Test func undoLastAfterTheUndoneRunWasPrunedGivesNoCommandForIt() throws {
        let box = try RunSandbox()
        try box.write("u.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  shell: exit 3
            """)
        #expect(try box.run(["run", "u.yaml", "--output", "prefixed"]).status == 0)
        let original = try #require((try JSONSerialization.jsonObject(with: Data(try box.run(["runs", "--json"]).stdout.utf8))
                as? [[String: Any]])?.first?["id"] as? String)
        #expect(try box.run(["undo", "last", "--output", "prefixed"]).status == 1)
        #expect(try box.run(["runs", "--prune", "1"]).status == 0)
        let gone = "run \(original) is no longer in the journal (`flow runs --prune` deleted it)"
        let again = try box.run(["undo", "last"])
        #expect(again.status == 2, "\(again)")
        #expect(again.stderrLines.last == "help: \(gone), so it cannot be undone again; to do its steps again, run the workflow again",
                "\(again)")
        let resume = try box.run(["resume", "last"])
        #expect(resume.status == 2, "\(resume)")
        #expect(resume.stderr.contains("is an undo of run \(original), which is no longer in the journal (`flow runs --prune` deleted it); "
                                       + "to do its steps again, run the workflow again"), "\(resume)")
        #expect(!resume.stderr.contains("flow undo"), "\(resume)")
    }
}
