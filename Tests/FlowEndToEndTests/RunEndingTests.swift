import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// How a run ends, through the binary: a failure `continue_on_error` allowed is told apart
/// from one that failed the run (every output mode, the summary, the events, the JUnit
/// report), and a recorded run that did not succeed says how to resume it (docs/cli.md,
/// "Allowed failures" and "The resume hint").
@Suite struct RunEndingTests {
    /// `soft` fails, allowed; `bad` fails the run; `after` is skipped for it.
    static let mixed = """
        steps:
          - { name: ok, shell: echo hi }
          - { name: soft, shell: exit 3, continue_on_error: true }
          - { name: bad, shell: echo oops; exit 2 }
          - { name: after, shell: echo after }
        """

    /// Allowed failures only, one by a group's `continue_on_error` (the step's failure
    /// fails the group, whose failure is allowed) and one by `defaults`: the run succeeds.
    static let allowedOnly = """
        defaults:
          continue_on_error: true
        steps:
          - { name: ok, shell: "true" }
          - name: grp
            continue_on_error: true
            sequential:
              - { name: inner, shell: exit 4, continue_on_error: false }
          - { name: soft, shell: exit 5 }
          - { name: last, shell: "true" }
        """

    // MARK: allowed failures

    /// prefixed, raw and `--quiet`: the step's end line says it was allowed, keeping its
    /// `✗`; a failure that fails the run does not; the summary counts per state and says
    /// how many were allowed.
    @Test(arguments: [["--output", "prefixed"], ["--output", "raw"], ["--output", "prefixed", "--quiet"]])
    func anAllowedFailuresEndLineAndTheSummarySayIt(_ mode: [String]) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixed)
        let r = try box.run(["run", "wf.yaml", "--no-journal"] + mode)
        #expect(r.status == 1, "\(r)")
        let lines = TTYOutputTests.timeless(r.stderrLines)
        #expect(lines.contains("✗ soft exit 3 (allowed to fail) T"), "\(r)")
        #expect(lines.contains("✗ bad exit 2 T"), "\(r)")
        #expect(lines.last == "✗ failed: 1 succeeded, 2 failed (1 allowed), 1 skipped in T", "\(r)")
    }

    /// grouped: the block's title says it inside its parentheses.
    @Test func groupedSaysAnAllowedFailureInItsBlocksTitle() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixed)
        let r = try box.run(["run", "wf.yaml", "--no-journal", "--output", "grouped"])
        #expect(r.status == 1, "\(r)")
        let lines = TTYOutputTests.timeless(r.stderrLines)
        #expect(lines.contains("── ✗ soft (exit 3 T; allowed to fail) ──"), "\(r)")
        #expect(lines.contains("── ✗ bad (exit 2 T) ──"), "\(r)")
        #expect(lines.last == "✗ failed: 1 succeeded, 2 failed (1 allowed), 1 skipped in T", "\(r)")
    }

    /// Allowed by a group's `continue_on_error` and by `defaults`: every failure is
    /// allowed, the run succeeds, and the summary says `(allowed)` of the whole count.
    @Test func failuresAllowedByAGroupAndByDefaultsLetTheRunSucceed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.allowedOnly)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        let lines = TTYOutputTests.timeless(r.stderrLines)
        #expect(lines.contains("✗ inner exit 4 (allowed to fail) T"), "\(r)")
        #expect(lines.contains("✗ soft exit 5 (allowed to fail) T"), "\(r)")
        #expect(lines.last == "✓ succeeded: 2 succeeded, 2 failed (allowed) in T", "\(r)")
    }

    /// Under GitHub Actions an allowed failure is a `::warning::`, not an `::error::`: the
    /// job does not fail for it.
    @Test func underGitHubActionsAnAllowedFailureIsAWarning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixed)
        let r = try box.run(["run", "wf.yaml", "--no-journal", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(r.status == 1, "\(r)")
        let annotations = TTYOutputTests.timeless(r.stdoutLines.filter { $0.hasPrefix("::warning") || $0.hasPrefix("::error") })
        #expect(annotations == [
            "::warning title=flow step soft failed (allowed)::soft: exit 3 (allowed to fail) T",
            "::error title=flow step bad failed::bad: exit 2 T",
        ], "\(r)")
    }

    /// tty: the row of an allowed failure says so, as does the row of a group whose
    /// failure was allowed; the summary as in the other modes.
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func theLiveTreesRowsSayWhichFailuresWereAllowed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.allowedOnly)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--no-journal", "--output", "tty"], rows: 20, columns: 80)
        #expect(run.finish() == 0, "\(run.report)")
        let rows = TTYOutputTests.timeless(run.screen.all)
        #expect(rows.contains("✗ grp allowed to fail T"), "\(run.report)")
        #expect(rows.contains { $0.hasSuffix("✗ inner exit 4 (allowed to fail) T") }, "\(run.report)")
        #expect(rows.contains("✗ soft exit 5 (allowed to fail) T"), "\(run.report)")
        #expect(rows.last == "✓ succeeded: 2 succeeded, 2 failed (allowed) in T", "\(run.report)")
    }

    /// json: `allowed_failure` on the ends of the steps (and the group) whose failure was
    /// allowed, on no other event; `allowed_failures` by state on `run_finished`.
    @Test func theEventsCarryWhichFailuresWereAllowed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.allowedOnly + "\n  - { name: hard, shell: exit 6, continue_on_error: false }\n")
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        let marked = r.jsonEvents.filter { $0["allowed_failure"] != nil }
        #expect(marked.map { "\($0["name"] ?? "") \($0["to"] ?? "")" } == ["inner failed", "grp failed", "soft failed"], "\(r)")
        #expect(marked.allSatisfy { EventStreamTests.jsonType($0["allowed_failure"]!) == "boolean" && $0["allowed_failure"] as? Bool == true },
                "\(r)")
        let finished = try #require(r.jsonEvents.last)
        #expect(finished["counts"] as? [String: Int] == ["succeeded": 2, "failed": 3], "\(r)")
        #expect(finished["allowed_failures"] as? [String: Int] == ["failed": 2], "\(r)")
        // None allowed: the member is there, empty.
        try box.write("ok.yaml", "steps:\n  - shell: \"true\"\n")
        let ok = try box.run(["run", "ok.yaml", "--output", "json"])
        #expect(ok.jsonEvents.last?["allowed_failures"] as? [String: Int] == [:], "\(ok)")
    }

    /// A step (or group) `continue_on_error` covers that is retried: only its last
    /// attempt's failure is the allowed one. Every attempt said "(allowed to fail)" and
    /// carried `allowed_failure`, as if the step had given up each time (found by the
    /// contract trace); the attempts a retry follows read as any retried attempt does.
    @Test func onlyTheLastAttemptOfARetriedStepIsAnAllowedFailure() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: soft, shell: exit 3, retry: { limit: 2, delay: 10ms }, continue_on_error: true }
              - name: grp
                continue_on_error: true
                retry: 1
                sequential:
                  - { name: inner, shell: exit 4 }
              - { name: last, shell: "true" }
            """)
        let prefixed = try box.run(["run", "wf.yaml", "--no-journal", "--output", "prefixed"])
        #expect(prefixed.status == 0, "\(prefixed)")
        let ends = TTYOutputTests.timeless(prefixed.stderrLines).filter { $0.hasPrefix("✗ soft") }
        #expect(ends == ["✗ soft exit 3 T", "✗ soft exit 3 T", "✗ soft exit 3 (allowed to fail) T"], "\(prefixed)")
        let json = try box.run(["run", "wf.yaml", "--no-journal", "--output", "json"])
        let failed = json.jsonEvents.filter { $0["to"] as? String == "failed" }
        #expect(failed.map { "\($0["name"] ?? "") \($0["attempt"] ?? "") \($0["allowed_failure"] as? Bool ?? false)" } == [
            "soft 1 false", "soft 2 false", "soft 3 true",
            // A step inside the retried group ends in each attempt (a new instance each
            // time): its failure in the attempt the group's retry follows is what makes the
            // group retry, not an allowed one; in the group's last attempt it is.
            "inner 1 false", "grp 1 false", "inner 1 true", "grp 2 true",
        ], "\(json)")
        let inner = TTYOutputTests.timeless(prefixed.stderrLines).filter { $0.hasPrefix("✗ inner") }
        #expect(inner == ["✗ inner exit 4 T", "✗ inner exit 4 (allowed to fail) T"], "\(prefixed)")
        #expect(json.jsonEvents.last?["allowed_failures"] as? [String: Int] == ["failed": 2], "\(json)")
        let github = try box.run(["run", "wf.yaml", "--no-journal", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        let annotations = TTYOutputTests.timeless(github.stdoutLines.filter { $0.hasPrefix("::warning") || $0.hasPrefix("::error") })
        #expect(annotations.filter { $0.contains("soft") } == ["::warning title=flow step soft failed (allowed)::soft: exit 3 (allowed to fail) T"],
                "\(github)")
    }

    /// JUnit: an allowed failure is a skipped case with its reason and output, not among
    /// the failures, so a run that exits 0 has a report with none.
    @Test func junitReportsAnAllowedFailureAsSkipped() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: soft, shell: echo said; exit 3, continue_on_error: true }
              - { name: ok, shell: "true" }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(r.status == 0, "\(r)")
        let xml = try #require(box.read("report.xml"))
        #expect(xml.contains(#"<testsuite name="wf" tests="2" failures="0" errors="0" skipped="1""#), "\(xml)")
        #expect(xml.contains("<skipped message=\"exit 3 (allowed to fail)\"/>\n      <system-out>said\n</system-out>"), "\(xml)")
        #expect(!xml.contains("<failure"), "\(xml)")
    }

    // MARK: the resume hint

    /// A sandbox whose `bin` holds `flow`, for a shell that runs a printed command.
    static func pathWithFlow(_ box: RunSandbox) throws -> String {
        try FileManager.default.createDirectory(atPath: box.path("bin"), withIntermediateDirectories: true)
        try? FileManager.default.createSymbolicLink(atPath: box.path("bin/flow"), withDestinationPath: RunSandbox.flowPath)
        return box.path("bin") + ":/usr/local/bin:/usr/bin:/bin"
    }

    /// Runs `command` as a POSIX shell reads it, in `directory` of the sandbox, with `flow`
    /// on PATH and `env` (an empty value removes a variable).
    static func shell(_ box: RunSandbox, _ command: String, in directory: String? = nil,
                      env extra: [String: String] = [:]) throws -> FlowOutcome {
        var env = box.environment
        env["PATH"] = try pathWithFlow(box)
        for (key, value) in extra { env[key] = value.isEmpty ? nil : value }
        let flow = try LiveFlow(executable: "/bin/sh", arguments: ["-c", command], environment: env,
                                directory: directory.map(box.path) ?? box.root.path, ownGroup: false)
        return try flow.finish(timeout: 60)
    }

    /// A failed run ends with the hint, last on stderr, naming its whole id; the printed
    /// command, run as printed, resumes it, and a resume that fails names its own new run.
    @Test func aFailedRunSaysHowToResumeItAndThatCommandResumesIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: first, shell: echo ran >> first.log }
              - { name: gate, shell: test -f fixed }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        let id = try #require(JournalEndToEndTests.runs(box).first?["id"] as? String)
        #expect(r.resumeHint == "\(FlowOutcome.flowInHint) resume \(id)", "\(r)")
        #expect(r.stderrLinesBeforeHint.last?.hasPrefix("✗ failed: ") == true, "\(r)")

        // Still failing: the resume names its own run, not the one it resumed.
        let again = try Self.shell(box, try #require(r.resumeHint))
        #expect(again.status == 1, "\(again)")
        #expect(again.stderrLines.first == "resuming run \(id): 1 step already succeeded", "\(again)")
        let newID = try #require(JournalEndToEndTests.runs(box).first?["id"] as? String)
        // Run through a shell that finds this flow on PATH: named `flow`.
        #expect(newID != id && again.resumeHint == "flow resume \(newID)", "\(again)")

        try box.write("fixed", "")
        let done = try Self.shell(box, try #require(again.resumeHint))
        #expect(done.status == 0, "\(done)")
        #expect(done.resumeHint == nil, "\(done)")
        #expect(box.lines("first.log") == ["ran"], "first ran once, reused twice")
    }

    /// `--quiet` keeps the hint; a run that succeeds (allowed failures and all) has none.
    @Test func quietKeepsTheHintAndSuccessHasNone() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixed)
        try box.write("ok.yaml", Self.allowedOnly)
        let quiet = try box.run(["run", "wf.yaml", "--quiet"])
        #expect(quiet.status == 1 && quiet.resumeHint != nil, "\(quiet)")
        let ok = try box.run(["run", "ok.yaml", "--output", "prefixed"])
        #expect(ok.status == 0, "\(ok)")
        #expect(ok.resumeHint == nil && !ok.stderr.contains("to resume from where it stopped"), "\(ok)")
    }

    /// No hint where there is nothing to resume from: `--no-journal`, a journal that
    /// cannot be opened; nor in `--output json` (the events carry the id).
    @Test func noHintWithoutAJournalOrInJSON() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.mixed)
        try box.write("not-a-dir", "")
        for arguments in [["--no-journal"], ["--state-dir", "not-a-dir"], ["--output", "json"]] {
            let r = try box.run(["run", "wf.yaml"] + arguments)
            #expect(r.status == 1, "\(arguments): \(r)")
            #expect(!r.stderr.contains("to resume from where it stopped"), "\(arguments): \(r)")
        }
    }

    /// `flow undo` that fails (an undo step fails) says nothing of `resume`: an undo is
    /// not resumed.
    @Test func aFailedUndoHasNoHint() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: made, shell: "true", undo: { name: unmake, shell: exit 4 } }
              - { name: bad, shell: exit 2 }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--no-rollback"])
        #expect(r.status == 1 && r.resumeHint != nil, "\(r)")
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.status == 1, "\(undo)")
        #expect(!undo.stderr.contains("to resume from where it stopped"), "\(undo)")
    }

    /// After Ctrl-C (exit 130) the run is resumable: the hint says so, and its command
    /// resumes it.
    @Test func anInterruptedRunSaysHowToResumeIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: first, shell: echo ran >> first.log }
              - { name: work, shell: "test -f go || $CHILD --stderr ready --sleep 30" }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--grace", "5s"])
        #expect(flow.waitForLine("work | ready"), "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        let id = try #require(JournalEndToEndTests.runs(box).first?["id"] as? String)
        #expect(r.resumeHint == "\(FlowOutcome.flowInHint) resume \(id)", "\(r)")
        #expect(r.stderrLinesBeforeHint.last?.hasPrefix("⊘ cancelled: ") == true, "\(r)")
        try box.write("go", "")
        let resumed = try Self.shell(box, try #require(r.resumeHint))
        #expect(resumed.status == 0, "\(resumed)")
        #expect(box.lines("first.log") == ["ran"], "\(resumed)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    /// The command needs no file: a workflow read from standard input, or at a path with
    /// spaces, resumes by id alone. A `--state-dir` with a space and a quote is carried
    /// along, quoted: each command works as printed.
    @Test func theHintsCommandWorksForStdinSpacesAndAStateDir() throws {
        let box = try RunSandbox()
        let workflow = "steps:\n  - { name: gate, shell: test -f fixed }\n"
        try box.write("my flows/wf one.yaml", workflow)
        try box.write("fixed-later", "")
        let stateDir = "it's state"
        for run in ["cat 'my flows/wf one.yaml' | flow run - --output prefixed", "flow run 'my flows/wf one.yaml' --output prefixed",
                    "flow run 'my flows/wf one.yaml' --output prefixed --state-dir \"\(stateDir)\""] {
            try? FileManager.default.removeItem(atPath: box.path("fixed"))
            let r = try Self.shell(box, run)
            #expect(r.status == 1, "\(run): \(r)")
            let hint = try #require(r.resumeHint, "\(run): \(r)")
            #expect(hint.contains("--state-dir") == run.contains("--state-dir"), "\(hint)")
            if run.contains("--state-dir") { #expect(hint.hasSuffix(#" --state-dir 'it'\''s state'"#), "\(hint)") }
            try box.write("fixed", "")
            let resumed = try Self.shell(box, hint)
            #expect(resumed.status == 0, "\(run) then \(hint): \(resumed)")
            #expect(resumed.stderrLines.first?.hasPrefix("resuming run ") == true, "\(resumed)")
        }
    }

    /// Paths the user gave, as flow names them at a run's end, show control characters
    /// escaped, as every other message does (`\u{1B}`): the resume hint's `--state-dir` and
    /// the JUnit report's write error wrote them raw, so an escape sequence in a directory
    /// name cleared the screen or set the terminal's title there.
    @Test func theHintAndTheReportErrorEscapeControlCharactersInPaths() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - exit 1\n")
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--state-dir", "sd\u{1B}[2J",
                             "--junit", "r\u{1B}]0;t\u{7}/x.xml"])
        #expect(r.status == 1, "\(r)")
        #expect(!r.stderr.contains("\u{1B}") && !r.stderr.contains("\u{7}"), "\(r)")
        #expect(r.stderr.contains(#"error: cannot write r\u{1B}]0;t\u{7}/x.xml: No such file or directory"#), "\(r)")
        #expect(r.resumeHint?.hasSuffix(#" --state-dir 'sd\u{1B}[2J'"#) == true, "\(r)")
    }

    /// A flow the shell would not find as `flow` (run by a relative path, with another
    /// `flow` earlier on PATH) is named as it was started: the printed command runs this
    /// flow, not the other one, nor fails with "command not found".
    @Test func theHintNamesAFlowThatIsNotOnPathAsItWasStarted() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - { name: gate, shell: test -f fixed }\n")
        try FileManager.default.createDirectory(atPath: box.path("tools"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: box.path("tools/flow-dev"), withDestinationPath: RunSandbox.flowPath)
        try box.write("other/flow", "#!/bin/sh\necho 'the other flow' >&2; exit 9\n")
        chmod(box.path("other/flow"), 0o755)
        let path = box.path("other") + ":/usr/local/bin:/usr/bin:/bin"
        let r = try Self.shell(box, "tools/flow-dev run wf.yaml --output prefixed", env: ["PATH": path])
        #expect(r.status == 1, "\(r)")
        let id = try #require(JournalEndToEndTests.runs(box).first?["id"] as? String)
        #expect(r.resumeHint == "tools/flow-dev resume \(id)", "\(r)")
        try box.write("fixed", "")
        let resumed = try Self.shell(box, try #require(r.resumeHint), env: ["PATH": path])
        #expect(resumed.status == 0 && !resumed.stderr.contains("the other flow"), "\(resumed)")
        #expect(resumed.stderrLines.first?.hasPrefix("resuming run \(id): ") == true, "\(resumed)")
    }

    /// `flow resume` moves into the run's directory before it runs: the hint of a resume
    /// that fails again still names flow as the shell it was started from finds it. Here a
    /// relative `PATH` entry finds this flow as `flow` in the run's directory and another
    /// `flow` where the resume was started.
    @Test func theHintOfAResumeStartedElsewhereNamesFlowAsThatShellFindsIt() throws {
        let box = try RunSandbox()
        try box.write("proj/wf.yaml", "steps:\n  - { name: gate, shell: test -f fixed }\n")
        try FileManager.default.createDirectory(atPath: box.path("proj/bin"), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: box.path("proj/bin/flow"), withDestinationPath: RunSandbox.flowPath)
        try box.write("here/bin/flow", "#!/bin/sh\necho 'the other flow' >&2; exit 9\n")
        chmod(box.path("here/bin/flow"), 0o755)
        let flow = FlowOutcome.flowInHint
        let first = try Self.shell(box, "\(flow) run wf.yaml --state-dir ../state --output prefixed", in: "proj")
        #expect(first.status == 1, "\(first)")
        let id = try #require(first.resumeHint?.split(separator: " ").dropFirst(2).first)
        let path = "bin:/usr/bin:/bin"
        let again = try Self.shell(box, "\(flow) resume \(id) --state-dir ../state --output prefixed", in: "here", env: ["PATH": path])
        #expect(again.status == 1, "\(again)")
        let hint = try #require(again.resumeHint, "\(again)")
        #expect(hint.hasPrefix("\(flow) resume "), "\(again)")
        try box.write("proj/fixed", "")
        let resumed = try Self.shell(box, hint, in: "here", env: ["PATH": path])
        #expect(resumed.status == 0 && !resumed.stderr.contains("the other flow"), "\(resumed)")
    }

    /// A binary replaced while it ran (rebuilt, upgraded: `/proc/self/exe` then reads
    /// `… (deleted)`) is named as it was started, which now starts its replacement: not
    /// `flow`, which this shell does not find.
    @Test func theHintOfAFlowReplacedWhileItRanNamesItAsItWasStarted() throws {
        let box = try RunSandbox()
        try FileManager.default.createDirectory(atPath: box.path("tools"), withIntermediateDirectories: true)
        try box.write("wf.yaml", """
            steps:
              - { name: rebuild, shell: cp tools/flow-copy tools/new && mv tools/new tools/flow-copy }
              - { name: gate, shell: test -f fixed }
            """)
        let path = "/usr/local/bin:/usr/bin:/bin"
        // Copied by `cp` in the shell, not by this process: a test spawning meanwhile would
        // inherit the copy's descriptor open for writing, and executing the copy then failed
        // with "Text file busy" (ETXTBSY; seen once in CI).
        let r = try Self.shell(box, "cp \"$FLOW_UNDER_TEST\" tools/flow-copy && tools/flow-copy run wf.yaml --output prefixed",
                               env: ["PATH": path, "FLOW_UNDER_TEST": RunSandbox.flowPath])
        #expect(r.status == 1, "\(r)")
        let id = try #require(JournalEndToEndTests.runs(box).first?["id"] as? String)
        #expect(r.resumeHint == "tools/flow-copy resume \(id)", "\(r)")
    }
}
