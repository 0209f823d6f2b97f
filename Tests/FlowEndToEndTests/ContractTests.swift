import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Statements of the contract (/work/shared/spec/workflow-format.md and cli.md) that no
/// test checked through the built binary before: one test per statement, named after it.
/// The other statements are checked by the suites the trace of the contract lists.
@Suite struct ContractTests {
    // MARK: top level

    /// `name` is optional; its default is the file name without its extension, which
    /// `${{ workflow.name }}` and `flow runs` give. `${{ run.id }}` is the run's id.
    @Test func nameDefaultsToTheFileNameWithoutItsExtension() throws {
        let box = try RunSandbox()
        try box.write("release-notes.yaml", """
            steps:
              - name: who
                print: "${{ workflow.name }} ${{ run.id }}"
            """)
        let r = try box.run(["run", "release-notes.yaml", "--output", "raw"])
        #expect(r.status == 0, "\(r)")
        let runs = try box.run(["runs", "--json"])
        let object = try JSONSerialization.jsonObject(with: Data(runs.stdout.utf8))
        let run = try #require((object as? [[String: Any]])?.first, "\(runs)")
        let id = try #require(run["id"] as? String, "\(runs)")
        #expect(run["workflow"] as? String == "release-notes", "\(runs)")
        #expect(r.stdoutLines == ["release-notes \(id)"], "\(r)")
    }

    /// The workflow's `shell` runs its shell steps: `bash`, or a path to one of the listed
    /// shells. (A shell step cannot take a `shell` option, its key being the command: an
    /// enclosing group's `shell` chooses, as docs/workflow-format.md says.)
    @Test func theWorkflowsShellRunsItsShellSteps() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            shell: bash
            steps:
              - shell: echo "top ${BASH_VERSION:+bash}"
              - sequential:
                  - shell: echo "group ${BASH_VERSION:+bash}"
                shell: sh
              - sequential:
                  - shell: echo "path ${BASH_VERSION:+bash}"
                shell: /bin/bash
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines == ["top bash", "group ", "path bash"], "\(r)")
    }

    /// Only `sh`, `bash`, `zsh`, `dash`, `ksh` or a path to one of them is a shell: any
    /// other value is an error at the value, and `flow run` runs nothing.
    @Test func aShellOutsideTheListIsAnErrorAtItsValue() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "shell: python3\nsteps:\n  - echo hi >> log\n")
        let validate = try box.run(["validate", "wf.yaml"])
        #expect(validate.status == 1, "\(validate)")
        #expect(validate.stderr.hasPrefix("wf.yaml:1:8: error: unsupported shell `python3` [invalid-value]\n"), "\(validate)")
        let run = try box.run(["run", "wf.yaml"])
        #expect(run.status == 2, "\(run)")
        #expect(!box.exists("log"))
    }

    /// `defaults` give every step that does not set them its options (here `timeout` and
    /// `retry`); a step's own value wins.
    @Test func defaultsApplyToStepsThatDoNotSetThem() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            defaults:
              retry: 2
              timeout: 100ms
            steps:
              - name: flaky
                shell: echo try >> log; exit 1
                timeout: 30s
                continue_on_error: true
              - name: slow
                shell: $CHILD --sleep 30
                retry: 0
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--grace", "100ms"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["try", "try", "try"], "retry 2 from defaults: \(r)")
        #expect(r.states(of: "slow") == ["running", "timed_out"], "timeout from defaults, its own retry 0: \(r)")
    }

    /// `steps` is required.
    @Test func aWorkflowWithoutStepsIsAnError() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "name: build\n")
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("wf.yaml:1:1: error: the workflow has no `steps` [missing-key]\n"), "\(r)")
    }

    // MARK: steps

    /// A step is a mapping with exactly one kind key: one without any is an error at it.
    @Test func aStepWithoutAKindKeyIsAnError() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - print: hi\n  - name: nothing\n    timeout: 1s\n")
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("wf.yaml:3:5: error: this step has no kind [missing-kind]\n"), "\(r)")
    }

    /// `max_parallel` is an int ≥ 1.
    @Test func maxParallelBelowOneIsAnError() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - concurrent: [a, b]\n    max_parallel: 0\n")
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("wf.yaml:3:19: error: `max_parallel` must be 1 or more, found 0 [invalid-value]\n"), "\(r)")
    }

    /// A step's `name` is unique in the file: the second use is an error, with a note at the first.
    @Test func aStepNameUsedTwiceIsAnErrorAtTheSecond() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: make
            finally:
              - name: build
                print: done
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("wf.yaml:5:11: error: duplicate step name `build` [duplicate-name]\n"), "\(r)")
        #expect(r.stderr.contains("wf.yaml:2:11: note: `build` is first used here\n"), "\(r)")
    }

    /// Durations: `250ms`, `1s`, `1.5s`, `2m`, `1h30m`, or a bare number meaning seconds.
    @Test func everyDurationSpellingOfTheContractIsAccepted() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - delay: 250ms
              - delay: 1s
              - delay: 1.5s
              - delay: 2m
              - delay: 1h30m
              - delay: 3
            """)
        let r = try box.run(["plan", "wf.yaml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines.dropFirst().prefix(6) == ["├─ delay: 250ms", "├─ delay: 1s", "├─ delay: 1.5s", "├─ delay: 2m",
                                                        "├─ delay: 1h30m", "└─ delay: 3s"], "\(r)")
        // 0.25 + 1 + 1.5 + 120 + 5400 + 3 seconds.
        #expect(r.stdoutLines.last == "6 steps, shortest wall time 1h32m5.75s", "\(r)")
    }

    // MARK: actions

    /// A parameter the action does not declare, given in `with`, is an error at the `use` site.
    @Test func anUnknownParameterInWithIsAnErrorAtIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            actions:
              deploy:
                params: { env: {} }
                steps: [ 'echo "${{ params.env }}"' ]
            steps:
              - use: deploy
                with: { env: prod, zone: eu }
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("wf.yaml:7:24: error: action `deploy` has no parameter `zone` [unknown-param]\n"), "\(r)")
    }

    // MARK: expressions

    /// The grammar: `'text'` (a doubled quote inside), numbers, `true`, `false`, `null`,
    /// `==`, `!=`, `&&`, `||`, `!` and parentheses.
    @Test func theExpressionGrammarEvaluatesThroughTheBinary() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars: { n: "3", flag: "yes" }
            steps:
              - name: show
                print: "${{ vars.n == 3 }} ${{ !(vars.flag == 'no') && (false || true) }} ${{ null == null }} ${{ 'it''s' }} ${{ 2.5 != 2 }}"
              - name: grouped
                if: "!(vars.n == 3 || false)"
                print: never
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        let printed = r.jsonEvents.filter { $0["event"] as? String == "output" }.compactMap { $0["line"] as? String }
        #expect(printed == ["true true true it's true"], "\(r)")
        #expect(r.finalState(of: "grouped") == "skipped", "\(r)")
    }

    // MARK: outputs

    /// Outputs become visible once the step succeeds: what a failed step wrote, and the
    /// outputs of a skipped step, evaluate to the empty string.
    @Test func anOutputOfAFailedOrSkippedStepIsEmpty() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: bad
                shell: echo "k=written" >> "$FLOW_OUTPUT"; exit 2
                continue_on_error: true
              - name: maybe
                if: false
                shell: echo "k=written" >> "$FLOW_OUTPUT"
                outputs: [k]
              - name: show
                shell: echo "bad=[${{ steps.bad.outputs.k }}] maybe=[${{ steps.maybe.outputs.k }}]"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines == ["bad=[] maybe=[]"], "\(r)")
    }

    /// With `outputs: [...]` declared, a reference to another key of that step is a
    /// validation error at the key, with a note at the declaration.
    @Test func aReferenceToAnOutputTheStepDoesNotDeclareIsAnError() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: tag
                shell: echo "version=1" >> "$FLOW_OUTPUT"
                outputs: [version]
              - print: "${{ steps.tag.outputs.digest }}"
            """)
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("wf.yaml:5:35: error: step `tag` does not declare the output `digest` [undeclared-output]\n"), "\(r)")
        #expect(r.stderr.contains("wf.yaml:4:15: note: `tag` declares its outputs here\n"), "\(r)")
    }

    // MARK: retry

    /// The delay before attempt n is `min(delay × backoff^(n-1), max_delay)`, as each
    /// retry's note says: attempt 2 waits 10ms × 3 = 30ms, attempt 3 90ms capped at 50ms,
    /// and so on (attempts counted from 1, as the notes count them).
    @Test func retryDelaysGrowByTheBackoffUpToTheMaximum() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: flaky
                shell: exit 1
                retry: { limit: 4, delay: 10ms, backoff: 3, max_delay: 50ms }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 1, "\(r)")
        let notes = r.stderrLines.filter { $0.hasPrefix("flaky: retrying") }
        #expect(notes == ["flaky: retrying (attempt 2 of 5) in 30ms", "flaky: retrying (attempt 3 of 5) in 50ms",
                          "flaky: retrying (attempt 4 of 5) in 50ms", "flaky: retrying (attempt 5 of 5) in 50ms"], "\(r)")
    }

    // MARK: cancellation and the terminal

    /// An `interactive` step runs alone: no other step runs beside it, also in a
    /// concurrent group whose other steps could all run at once.
    @Test func anInteractiveStepRunsWithNoOtherStepBesideIt() throws {
        let box = try RunSandbox()
        func step(_ name: String, interactive: Bool = false) -> String {
            "      - name: \(name)\n" + (interactive ? "        interactive: true\n" : "")
                + "        shell: echo start \(name) >> log; sleep 0.2; echo end \(name) >> log\n"
        }
        try box.write("wf.yaml", "steps:\n  - concurrent:\n" + step("a") + step("i", interactive: true) + step("b"))
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(r.status == 0, "\(r)")
        let log = box.lines("log")
        let start = try #require(log.firstIndex(of: "start i"), "\(log)")
        #expect(log.count == 6 && log[start + 1] == "end i", "nothing starts or ends while `i` runs: \(log)")
    }

    /// Children start with an empty signal mask whatever flow inherited: a flow started
    /// with SIGTERM, SIGHUP and SIGUSR1 blocked starts its steps with none blocked. The
    /// command names the program by its path, so flow executes it directly: a shell in
    /// between (`$CHILD …`) empties the mask itself and would hide a mask flow passed on.
    @Test func stepsStartWithNoSignalBlockedWhateverFlowInherited() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: state
                shell: \(RunSandbox.childPath) --print-signal-state
            """)
        let flow = try LiveFlow(executable: RunSandbox.flowPath, arguments: ["run", "wf.yaml", "--output", "prefixed"],
                                environment: box.environment, directory: box.root.path, ownGroup: false,
                                blocked: [SIGTERM, SIGHUP, SIGUSR1])
        let r = try flow.finish(timeout: 30)
        #expect(r.status == 0, "\(r)")
        #expect(r.stdout.contains("state | blocked: \n"), "\(r)")
        #expect(r.stdout.contains("state | ignored: \n"), "\(r)")
    }

    /// `--grace` defaults to 5s: the first signal's note gives the grace in force, so the
    /// default shows without waiting it out (the step ends at the SIGINT itself).
    @Test func theGraceDefaultsToFiveSeconds() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: work, shell: $CHILD --stderr ready --sleep 30 }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed", "--no-journal"])
        #expect(flow.waitForLine("work | ready"), "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(r.stderrLines.contains { $0.hasPrefix("SIGINT: stopping: ") && $0.contains(" (SIGKILL after 5s), ") }, "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    // MARK: the command line

    /// `flow show RUN_ID`: each step with its state, attempts, exit code and duration.
    @Test func showGivesEachStepsStateAttemptsExitCodeAndDuration() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: flaky
                shell: exit 3
                retry: 1
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        let show = try box.run(["show", "last"])
        #expect(show.status == 0, "\(show)")
        let row = try #require(show.stdoutLines.first { $0.hasPrefix("✗ flaky") }, "\(show)")
        #expect(row.range(of: #"^✗ flaky  \[failed · 2 attempts · exit 3 · [0-9.]+s\]$"#, options: .regularExpression) != nil,
                "\(show)")
    }

    /// `flow resume` runs a failed or cancelled run again: a run that succeeded has nothing
    /// to resume and is refused (exit 2), running nothing.
    @Test func resumeRefusesARunThatSucceeded() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - { name: a, shell: echo a >> log }\n")
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let id = try #require(try box.run(["runs", "--json"]).stdout.split(separator: "\"").dropFirst(3).first)
        let r = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(r.status == 2, "\(r)")
        #expect(r.stderr == "error: run \(id) succeeded; there is nothing to resume\n", "\(r)")
        #expect(box.lines("log") == ["a"], "nothing ran again")
    }

    /// `flow undo` rolls back a finished run, and `flow resume` takes a failed or cancelled
    /// one: a run still running is refused by both (exit 2), and nothing is undone.
    @Test func undoAndResumeRefuseARunStillRunning() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: a, shell: "true", undo: echo undone >> log }
              - name: wait
                shell: echo ready; while [ ! -f go ]; do sleep 0.02; done
            """)
        let live = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(live.waitForLine("wait | ready"), "\(live.stderr)")
        for command in ["undo", "resume"] {
            let r = try box.run([command, "last", "--output", "prefixed"])
            #expect(r.status == 2, "\(r)")
            #expect(r.stderr.hasPrefix("error: run ") && r.stderr.contains(" is still running (pid \(live.pid) on "), "\(r)")
        }
        try box.write("go", "")
        #expect(try live.finish().status == 0)
        #expect(!box.exists("log"), "nothing was undone")
    }

    /// `--tags` / `--skip-tags`: a group whose steps are all left out ends up empty and is
    /// skipped, with them; the run goes on and succeeds.
    @Test func aGroupWhoseStepsAllEndUpDeselectedIsSkipped() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                sequential:
                  - { name: s1, tags: [slow], shell: echo s1 >> log }
                  - { name: s2, tags: [slow], shell: echo s2 >> log }
              - { name: fast, shell: echo fast >> log }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--skip-tags", "slow"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["fast"], "\(r)")
        #expect(r.states(of: "grp") == ["skipped"], "\(r)")
        #expect(r.finalStates.values.filter { $0 == "skipped" }.count == 3, "\(r)")
    }

    /// `--only NAME` runs that step alone, with its group context: the enclosing group's
    /// `env` reaches it; its siblings do not run.
    @Test func onlyRunsTheStepWithItsGroupsContext() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                env: { WHERE: grp }
                sequential:
                  - { name: s1, shell: echo "s1 $WHERE" >> log }
                  - { name: s2, shell: echo "s2 $WHERE" >> log }
              - { name: other, shell: echo other >> log }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--only", "s2"])
        #expect(r.status == 0, "\(r)")
        #expect(box.lines("log") == ["s2 grp"], "\(r)")
    }

    /// `--output auto` (the default) is `tty` on a terminal: the live tree's count line,
    /// `N/M steps finished`, is on screen, which no other mode writes.
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func theDefaultOutputOnATerminalIsTheLiveTree() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - { name: a, print: hi }\n")
        let run = try TerminalRun(box, ["run", "wf.yaml", "--no-journal"], rows: 10, columns: 80)
        #expect(run.finish() == 0, "\(run.report)")
        // A `print` step's line goes above the tree (docs/cli.md).
        #expect(TTYOutputTests.timeless(run.screen.all) == ["hi", "✓ a T", "1/1 steps finished", "✓ succeeded: 1 succeeded in T"],
                "\(run.report)")
    }

    /// `tty`: the finished tree stays on screen, followed by the full output of the failed
    /// steps (and of them only), then the summary.
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func theFinishedTreeIsFollowedByTheOutputOfFailedSteps() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: good, shell: echo fine }
              - { name: bad, shell: echo one; echo two; exit 3 }
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--no-journal", "--output", "tty"], rows: 20, columns: 80)
        #expect(run.finish() == 1, "\(run.report)")
        #expect(TTYOutputTests.timeless(run.screen.all) == [
            "✓ good T", "✗ bad exit 3 T", "2/2 steps finished",
            "── output of bad ──", "one", "two",
            "✗ failed: 1 succeeded, 1 failed in T",
        ], "\(run.report)")
    }

    /// `tty` repeats the failed step's whole output, not its last 64 KiB ("the full output
    /// of failed steps"): what leaves memory goes to a temporary file, read back at the end.
    /// A chatty step that succeeded before it is not repeated.
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func theOutputOfAFailedStepIsRepeatedWholeHoweverLong() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: chatty
                shell: 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo "fine $i"; done'
              - name: big
                shell: 'i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo "line $i of the output"; done; exit 1'
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--no-journal", "--output", "tty"], rows: 20, columns: 80)
        #expect(run.finish() == 1, "\(run.report)")
        let lines = TTYOutputTests.timeless(run.screen.all)
        let header = try #require(lines.firstIndex(of: "── output of big ──"), "\(lines.suffix(5))")
        let replayed = Array(lines[(header + 1)...].prefix(3001))
        let whole = replayed == (1...3000).map { "line \($0) of the output" } + ["✗ failed: 1 succeeded, 1 failed in T"]
        #expect(whole, "\(replayed.count) lines, starting \(replayed.prefix(2))")
        #expect(!lines.contains("fine 3000"), "a succeeded step's output is not repeated")
    }

    /// A Ctrl-C while `tty` repeats a long failed output stops the replay (the run had
    /// ended: the first signal was taken by nothing and the replay went on to its end), says
    /// so, and the run ends as it had: its summary, its exit status.
    @Test(.enabled(if: pseudoTerminalsAvailable, "this machine gives no pseudo-terminal (/dev/ptmx)"))
    func aSignalDuringTheReplayOfFailedOutputStopsIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: big
                shell: 'seq 1 400000 | sed "s/^/line /"; exit 1'
            """)
        let run = try TerminalRun(box, ["run", "wf.yaml", "--no-journal", "--output", "tty"], rows: 20, columns: 80)
        // Four megabytes follow the header: flow is still writing them when the signal comes.
        #expect(run.readOutput(until: "── output of big ──"), "\(run.report)")
        kill(run.pid, SIGINT)
        #expect(run.finish() == 1, "\(run.report)")
        let lines = TTYOutputTests.timeless(run.screen.all)
        #expect(lines.contains("… (the rest of the output of failed steps left out: interrupted)"), "\(lines.suffix(4))")
        #expect(!lines.contains("line 400000"), "the replay went on to its end")
        #expect(lines.last == "✗ failed: 1 failed in T", "\(lines.suffix(4))")
    }

    /// The empty value of a `? key` with no `:` at the end of the file is reported where
    /// the value is missing, just past the key, with its line shown: it was placed on the
    /// line after the last (libyaml's end of stream), which the file does not have, and
    /// shown with no excerpt (found by the fuzzer). Also after non-ASCII text: libyaml counts
    /// the input in characters, and compared with its bytes, that value was never found at
    /// the end (`é` and `😀` in a comment put it on line 3 of a 2-line file).
    @Test func anEmptyValueAtTheEndOfTheFileIsReportedOnItsLastLine() throws {
        let box = try RunSandbox()
        for (name, text) in [("bare.yaml", "steps:\n  - ? print"), ("newline.yaml", "steps:\n  - ? print\n\n  \n"),
                             ("non-ascii.yaml", "steps: # é 😀\n  - ? print\n"), ("bom.yaml", "\u{FEFF}steps: # é\r\n  - ? print")] {
            try box.write(name, text)
            let r = try box.run(["validate", name])
            #expect(r.status == 1, "\(r)")
            #expect(r.stderr == """
                \(name):2:12: error: `print` must be a string, found null [wrong-type]
                  |
                2 |   - ? print
                  |            ^
                1 error in 1 file

                """, "\(r)")
        }
        // After a U+2028 (a line break to YAML, three bytes and one character) the end of
        // the input was not recognised, and the error pointed at line 3 of 2 (the fuzzer).
        try box.write("separator.yaml", "steps:\u{2028}- ? print")
        let r = try box.run(["validate", "separator.yaml"])
        #expect(r.stderr.contains("separator.yaml:2:10: error: `print` must be a string, found null [wrong-type]"), "\(r)")
    }

    /// `flow validate` reports tab indentation at the tab.
    @Test func tabIndentationIsAnErrorAtTheTab() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n\t- print: hi\n")
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("wf.yaml:2:1: error: tab character in indentation [tab-indentation]\n"), "\(r)")
        // The tab is seen in the excerpt, under the caret (a blank there showed nothing).
        #expect(r.stderr.contains("2 | →- print: hi\n  | ^ YAML indentation must use spaces\n"), "\(r)")
        // So is a tab in a value, and the carets after it stay under their span.
        try box.write("value.yaml", "steps:\n  - shell: \"echo\\tx\"\n  - shell: printf 'a\tb'\n    retyr: 1\n")
        let value = try box.run(["validate", "value.yaml"])
        #expect(value.stderr.contains("4 |     retyr: 1\n  |     ^^^^^"), "\(value)")
        try box.write("inline.yaml", "steps:\n  - { shell: printf 'a\tb', retyr: 1 }\n")
        let inline = try box.run(["validate", "inline.yaml"])
        #expect(inline.stderr.contains("2 |   - { shell: printf 'a→b', retyr: 1 }\n  |                            ^^^^^"), "\(inline)")
    }
}
