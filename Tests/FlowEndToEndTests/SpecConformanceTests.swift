import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Statements of the contract (/work/shared/spec/workflow-format.md and cli.md) that the
/// audit of 2026-11-27 found unpinned, or the binary getting wrong, checked through the
/// built binary: one test per statement, named after it. Each is quick (no step sleeps
/// longer than a fraction of a second, and nothing is timed).
@Suite struct SpecConformanceTests {
    // MARK: plan

    /// "A last line gives the number of steps and the shortest possible wall time implied by
    /// delays": a step that `max_parallel` holds back starts when an earlier one ends, so a
    /// failure of it (here a time-out) comes no sooner than that. The plan said 2s for
    /// these runs of 4s, counting the held-back step as if it had started with the group.
    @Test(arguments: ["true", "false"])
    func theShortestWallTimeWaitsForAStepMaxParallelHoldsBack(failFast: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - delay: 2s
                  - delay: 3s
                    timeout: 2s
                max_parallel: 1
                fail_fast: \(failFast)
            """)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.last == "3 steps, shortest wall time 4s", "\(plan)")
    }

    /// The same "shortest possible wall time" for a step that must time out under `retry`:
    /// a time-out is always retried, so every attempt times out, with the retry's waits
    /// between them (a group's `finally` in each attempt). The plan counted one attempt:
    /// 500ms for these runs of 1.6s.
    @Test func theShortestWallTimeCountsEveryAttemptOfAStepThatMustTimeOut() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - sequential:
                  - delay: 1s
                timeout: 300ms
                retry: { limit: 2, delay: 100ms }
                continue_on_error: true
              - delay: 5s
                timeout: 200ms
                retry: { limit: 1, delay: 50ms, backoff: 2 }
            """)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.last == "3 steps, shortest wall time 1.6s", "\(plan)")
    }

    /// The same for the steps that run after a failure: `if: always()` and `if: failure()`
    /// steps after a step that must time out run (a plain one is skipped). The plan counted
    /// them as zero: 1s for these runs of 6s.
    @Test func theShortestWallTimeCountsTheStepsThatRunAfterAFailure() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - delay: 10s
                timeout: 1s
              - delay: 2s
                if: always()
              - delay: 3s
                if: failure()
              - delay: 4s
            """)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.last == "4 steps, shortest wall time 6s", "\(plan)")
        // And a `finally` after work that must fail: its `if: failure()` steps run, its
        // `if: success()` ones do not (1s + 2s + 100ms + 300ms; it said 1.1s).
        try box.write("finally.yaml", """
            steps:
              - sequential:
                  - delay: 5s
                    timeout: 1s
                finally:
                  - delay: 2s
                    if: failure()
                  - delay: 4s
                    if: success()
                  - delay: 100ms
            finally:
              - delay: 300ms
                if: failure()
            """)
        let cleanup = try box.run(["plan", "finally.yaml"])
        #expect(cleanup.stdoutLines.last == "6 steps, shortest wall time 3.4s", "\(cleanup)")
    }

    /// Working out both ways a step can come (after work that ended fine, after a failure)
    /// must not work out its steps twice: 60 levels of groups that each run after a
    /// failure, or each in the `finally` of the one around it, doubled the walk at every
    /// level, and `flow plan` did not end.
    @Test(arguments: [false, true])
    func theShortestWallTimeOfDeeplyNestedGroupsIsWorkedOutOnce(inFinally: Bool) throws {
        let box = try RunSandbox()
        var lines = ["steps:"]
        var indent = "  "
        for _ in 0..<60 {
            lines += inFinally
                ? [indent + "- sequential:", indent + "    - delay: 1s", indent + "      timeout: 1ms", indent + "  finally:"]
                : [indent + "- if: always()", indent + "  sequential:", indent + "    - delay: 1s", indent + "      timeout: 1ms"]
            indent += "    "
        }
        lines.append(indent + "- delay: 1ms")
        try box.write("wf.yaml", lines.joined(separator: "\n") + "\n")
        let plan = try box.run(["plan", "wf.yaml"], timeout: 120)
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.last == "121 steps, shortest wall time \(inFinally ? "61ms" : "60ms")", "\(plan)")
    }

    /// "`flow run FILE --dry-run`: print the execution tree (same as `flow plan`), run
    /// nothing", with every argument that decides what the tree is (ACTION, `--with`,
    /// `--var`, `--tags`), in text and in JSON (`--output json` is `--format json`); and
    /// nothing is recorded.
    @Test func aDryRunPrintsWhatPlanPrintsForTheSameArguments() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars: { target: dev }
            actions:
              deploy:
                params:
                  env: { required: true }
                steps:
                  - name: push
                    shell: echo "push ${{ params.env }} ${{ vars.target }}" >> log
                    tags: [ship]
                  - name: check
                    shell: echo check >> log
                    tags: [verify]
            steps:
              - shell: echo main >> log
            """)
        let arguments = ["wf.yaml", "deploy", "--with", "env=prod", "--var", "target=qa", "--tags", "ship"]
        let plan = try box.run(["plan"] + arguments)
        let dry = try box.run(["run"] + arguments + ["--dry-run"])
        #expect(plan.status == 0 && dry.status == 0, "\(plan)\n\(dry)")
        #expect(dry.stdout == plan.stdout, "\(plan)\n\(dry)")
        #expect(plan.stdoutLines == [
            "wf · action deploy(env=prod) (wf.yaml)",
            "├─ shell push: echo \"push prod qa\" >> log  [tags ship]",
            "└─ ○ shell check: echo check >> log  [tags verify]  (skipped: not selected)",
            "",
            "2 steps (1 selected), shortest wall time 0s",
        ], "\(plan)")
        let planJSON = try box.run(["plan"] + arguments + ["--format", "json"])
        let dryJSON = try box.run(["run"] + arguments + ["--dry-run", "--output", "json"])
        #expect(planJSON.status == 0 && dryJSON.status == 0, "\(planJSON)\n\(dryJSON)")
        #expect(dryJSON.stdout == planJSON.stdout, "\(planJSON)\n\(dryJSON)")
        #expect(!box.exists("log"))
        #expect(!box.exists("state/journal.sqlite"), "a dry run records nothing")
    }

    /// "Only failures whose exit code is in `exit_codes` … and time-outs are retried": an
    /// empty list retries no exit code, only time-outs, and the plan says so. It printed
    /// `[retry 2 on exit ]`, naming no code.
    @Test func anEmptyExitCodesListRetriesOnlyTimeOuts() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: code
                shell: echo code >> log; exit 1
                retry: { limit: 2, exit_codes: [] }
                continue_on_error: true
              - name: slow
                shell: echo slow >> log; exec $CHILD --sleep 30
                timeout: 100ms
                retry: { limit: 1, exit_codes: [] }
            """)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.contains("├─ shell code: echo code >> log; exit 1  [retry 2 on timeout only · continue_on_error]"), "\(plan)")
        #expect(plan.stdoutLines.contains("└─ shell slow: echo slow >> log; exec $CHILD --sleep 30  [timeout 100ms · retry 1 on timeout only]"), "\(plan)")
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--grace", "100ms"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["code", "slow", "slow"], "\(r)")
    }

    /// The plan's `retry` option says how long each retry waits (docs/cli.md, `every D`
    /// when every retry waits the same): a `max_delay` below `delay` makes every wait
    /// `max_delay`, and with no `delay` nothing waits, whatever the `backoff`. It printed
    /// `every 500ms max 100ms` for waits of 100ms, as the run's notes say.
    @Test func thePlansRetryOptionGivesTheWaitsTheRunWaits() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: capped
                shell: exit 1
                retry: { limit: 2, delay: 500ms, max_delay: 100ms }
                continue_on_error: true
              - name: grows
                shell: exit 1
                retry: { limit: 2, delay: 50ms, backoff: 3, max_delay: 200ms }
                continue_on_error: true
              - name: nowait
                shell: exit 1
                retry: { limit: 1, backoff: 2, max_delay: 1s }
                continue_on_error: true
            """)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.dropFirst().prefix(3) == [
            "├─ shell capped: exit 1  [retry 2 every 100ms · continue_on_error]",
            "├─ shell grows: exit 1  [retry 2 after 150ms ×3 max 200ms · continue_on_error]",
            "└─ shell nowait: exit 1  [retry 1 · continue_on_error]",
        ], "\(plan)")
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(run.stderrLines.filter { $0.contains(": retrying") } == [
            "capped: retrying (attempt 2 of 3) in 100ms", "capped: retrying (attempt 3 of 3) in 100ms",
            "grows: retrying (attempt 2 of 3) in 150ms", "grows: retrying (attempt 3 of 3) in 200ms",
            "nowait: retrying (attempt 2 of 2)",
        ], "\(run)")
    }

    /// The plan's step line is `KIND[ NAME]: DETAIL  [OPTIONS]  — DESCRIPTION`, "the parts
    /// … only when there is something to show" (docs/cli.md): a blank `description` adds
    /// nothing. It added a dangling `  — `.
    @Test func aBlankDescriptionAddsNothingToThePlanLine() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: build
                shell: make
                description: ""
              - name: test
                shell: make test
                description: "  "
            """)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.prefix(3) == ["wf (wf.yaml)", "├─ shell build: make", "└─ shell test: make test"], "\(plan)")
    }

    /// "Bad expressions … are all reported with their location": an empty bare `if` is
    /// named as such. Its help asked for an expression "between `${{` and `}}`", which
    /// the value does not have.
    @Test func anEmptyIfIsNamedAtItsValue() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - print: hi\n    if: \"\"\n  - print: there\n    if: ${{ }}\n")
        let r = try box.run(["validate", "wf.yaml"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stderr.hasPrefix("""
            wf.yaml:3:9: error: `if` is empty [expression-syntax]
              |
            3 |     if: ""
              |         ^^ write a condition, such as `vars.target == 'prod'`, or remove `if`

            """), "\(r)")
        #expect(r.stderr.contains("wf.yaml:5:12: error: empty expression [expression-syntax]"), "\(r)")
    }

    /// "Each line showing kind, name, the command or message": one that starts with a line
    /// break shows its first line that is not blank (it showed ` …` alone), in `plan`,
    /// `graph` and `flow show`.
    @Test func aCommandStartingWithALineBreakShowsItsFirstLineOfText() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - shell: "\\necho hi"
              - print: "\\n\\nhello\\nworld"
            """)
        let plan = try box.run(["plan", "wf.yaml"])
        #expect(plan.status == 0, "\(plan)")
        #expect(plan.stdoutLines.prefix(3) == ["wf (wf.yaml)", "├─ shell: echo hi …", "└─ print: hello …"], "\(plan)")
        let graph = try box.run(["graph", "wf.yaml"])
        #expect(graph.stdoutLines.contains("  n1[\"echo hi …\"]") && graph.stdoutLines.contains("  n2[\"print hello …\"]"), "\(graph)")
        #expect(try box.run(["run", "wf.yaml", "--output", "raw"]).status == 0)
        let show = try box.run(["show", "last"])
        #expect(show.stdoutLines.contains { $0.hasPrefix("✓ shell@1: echo hi …  [") }, "\(show)")
    }

    // MARK: groups, retry, cancellation

    /// `continue_on_error`: "a failure is recorded but does not fail the parent", so it is
    /// not the failure `fail_fast` cancels the siblings for: the running sibling ends by
    /// itself and the one `max_parallel` held back still starts.
    @Test func aFailureContinueOnErrorAllowsDoesNotFailFast() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: pair
                concurrent:
                  - name: soft
                    shell: while [ ! -f started ]; do sleep 0.01; done; exit 1
                    continue_on_error: true
                  - name: running
                    shell: touch started; while [ ! -f soft-ended ]; do sleep 0.01; done; echo running >> log
                  - name: held
                    shell: echo held >> log; touch soft-ended
                max_parallel: 2
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 0, "\(r)")
        #expect(r.finalState(of: "soft") == "failed", "\(r)")
        #expect(r.finalState(of: "running") == "succeeded", "\(r)")
        #expect(r.finalState(of: "held") == "succeeded", "\(r)")
        #expect(r.finalState(of: "pair") == "succeeded", "\(r)")
        #expect(box.lines("log") == ["held", "running"], "\(r)")
    }

    /// `finally`: "steps that always run after the group's children, even after failure or
    /// cancellation": a group's `timeout` cancels its children, and its `finally` then runs
    /// whole, not cut short by the time-out that has passed (docs/workflow-format.md,
    /// Groups); the group ends `timed_out` and fails the run.
    @Test func aGroupsTimeoutCancelsItsStepsAndItsFinallyRunsWhole() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                sequential:
                  - name: body
                    shell: exec $CHILD --sleep 30
                timeout: 200ms
                finally:
                  - name: fin
                    shell: sleep 0.3; echo "fin ${{ steps.body.status }} ${{ run.status }}" >> log
              - { name: after, shell: echo after >> log }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--grace", "100ms"])
        #expect(r.status == 1, "\(r)")
        #expect(box.lines("log") == ["fin cancelled failed"], "\(r)")
        #expect(r.finalState(of: "body") == "cancelled" && r.finalState(of: "fin") == "succeeded", "\(r)")
        #expect(r.finalState(of: "g") == "timed_out" && r.finalState(of: "after") == "skipped", "\(r)")
    }

    /// "Cancellation is never retried": a step that a sibling's fail-fast or its group's
    /// `timeout` stops ends `cancelled` after one attempt, whatever its own `retry`.
    @Test func aStepStoppedByFailFastOrItsGroupsTimeoutIsNotRetried() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - concurrent:
                  - name: boom
                    shell: while [ ! -f started ]; do sleep 0.01; done; exit 1
                  - name: sibling
                    shell: echo sibling >> log; touch started; exec $CHILD --sleep 30
                    retry: 2
                continue_on_error: true
              - sequential:
                  - name: inner
                    shell: echo inner >> log; exec $CHILD --sleep 30
                    retry: 2
                timeout: 300ms
                continue_on_error: true
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json", "--grace", "100ms"])
        #expect(r.status == 0, "\(r)")
        #expect(r.states(of: "sibling") == ["running", "cancelled"], "\(r)")
        #expect(r.states(of: "inner") == ["running", "cancelled"], "\(r)")
        #expect(box.lines("log") == ["sibling", "inner"], "\(r)")
    }

    /// A `finally` step "always runs" after its group's failure: an `if` without a status
    /// function (which implies `success()` elsewhere) still lets it run there, while a
    /// written-out `success()` is false, as it sees the failure (docs/workflow-format.md,
    /// `if`). In the root's `finally` as in a group's.
    @Test func aFinallyStepsPlainIfRunsAfterAFailureAndSuccessIsFalse() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars: { mode: full }
            steps:
              - sequential:
                  - shell: exit 1
                finally:
                  - print: "group plain if"
                    if: vars.mode == 'full'
                  - print: "group success()"
                    if: success()
                  - print: "group failure()"
                    if: failure()
            finally:
              - print: "root plain if"
                if: vars.mode == 'full'
              - print: "root success()"
                if: success() && vars.mode == 'full'
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdoutLines == ["group plain if", "group failure()", "root plain if"], "\(r)")
    }

    // MARK: rollback

    /// "the `undo` steps of every step that succeeded run in the reverse order of their
    /// completion, after all `finally` blocks": a group completes after its steps, so its
    /// undo comes before theirs; a `finally` step that succeeded is reversed too, first;
    /// the step that failed, and one whose failure `continue_on_error` allowed, are not.
    @Test func rollbackReversesAGroupBeforeItsStepsAndSkipsWhatFailed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                sequential:
                  - { name: c1, print: c1, undo: { print: undo-c1 } }
                  - { name: c2, print: c2, undo: { print: undo-c2 } }
                undo: { print: undo-g }
              - name: soft
                shell: exit 1
                continue_on_error: true
                undo: { print: undo-soft }
              - name: bad
                shell: exit 1
                undo: { print: undo-bad }
            finally:
              - { name: f, print: fin, undo: { print: undo-fin } }
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        let printed = r.jsonEvents.filter { $0["event"] as? String == "output" }.compactMap { $0["line"] as? String }
        #expect(printed == ["c1", "c2", "fin", "undo-fin", "undo-g", "undo-c2", "undo-c1"], "\(r)")
        #expect(r.finalState(of: "g") == "undone" && r.finalState(of: "f") == "undone", "\(r)")
        #expect(r.finalState(of: "soft") == "failed" && r.finalState(of: "bad") == "failed", "\(r)")
    }

    // MARK: defaults

    /// "`defaults`: default options for every step that does not set them": a step's own
    /// setting wins (`dir`, `continue_on_error: false`), an enclosing group's `shell` wins
    /// over `defaults.shell`, which wins over the workflow's `shell`
    /// (docs/workflow-format.md, defaults).
    @Test func aStepsOwnSettingAndItsGroupsShellWinOverDefaults() throws {
        let box = try RunSandbox()
        try FileManager.default.createDirectory(atPath: box.path("sub"), withIntermediateDirectories: true)
        try box.write("wf.yaml", """
            shell: bash
            defaults:
              shell: sh
              dir: sub
              continue_on_error: true
            steps:
              - shell: echo "default ${BASH_VERSION:+bash} $(basename "$PWD")"
              - sequential:
                  - shell: echo "group ${BASH_VERSION:+bash} $(basename "$PWD")"
                    dir: .
                shell: bash
              - name: allowed
                shell: exit 2
              - name: strict
                shell: exit 3
                continue_on_error: false
              - shell: echo never
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "json"])
        #expect(r.status == 1, "\(r)")
        let printed = r.jsonEvents.filter { $0["event"] as? String == "output" }.compactMap { $0["line"] as? String }
        let here = URL(fileURLWithPath: box.root.path).lastPathComponent
        #expect(printed == ["default  sub", "group bash \(here)"], "\(r)")
        #expect(r.finalState(of: "allowed") == "failed" && r.finalState(of: "strict") == "failed", "\(r)")
        #expect(r.finalStates["5"] == "skipped", "\(r)")
    }

    // MARK: expressions

    /// Precedence, lowest first: `||`, `&&`, `==`/`!=`, `!`; `&&` and `||` return an
    /// operand. So `!0 == 1` is `(!0) == 1` (a boolean is never a number: false), and
    /// `true || false && false` is `true || (false && false)`.
    @Test func operatorPrecedenceAndOperandsThroughTheBinary() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            vars: { empty: "", region: eu }
            steps:
              - print: "${{ !0 == 1 }} ${{ true || false && false }} ${{ vars.empty || 'fallback' }} ${{ vars.region && 'set' }} [${{ vars.empty && 'x' }}] [${{ 0 || null }}]"
              - print: "${{ !(0 == 1) }} ${{ (true || false) && false }} ${{ 'a' == 'A' }} ${{ '01' == 1 }} ${{ '0x10' == 16 }} ${{ true == 'true' }}"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines == ["false true fallback set [] []", "true false false true false true"], "\(r)")
    }

    /// `failure()` is "one has failed", and `continue_on_error` "a failure is recorded but
    /// does not fail the parent": an allowed failure leaves `failure()` false and
    /// `success()` true after it, and `run.status` `succeeded`, while the step's own
    /// `status` says `failed`; inside a group whose `continue_on_error` allowed it, the
    /// failure is the group's until it ends (docs/workflow-format.md, status functions).
    @Test func anAllowedFailureIsNotAFailureForTheStepsAfterIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: soft
                shell: exit 1
                continue_on_error: true
              - print: "failure() after soft"
                if: failure()
              - print: "success() after soft: ${{ steps.soft.status }}"
                if: success()
              - name: g
                sequential:
                  - shell: exit 1
                  - print: "in g, plain"
                  - print: "in g, failure()"
                    if: failure()
                continue_on_error: true
              - print: "after g: ${{ steps.g.status }}"
                if: success()
            finally:
              - print: "finally ${{ run.status }}"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stdoutLines == ["success() after soft: failed", "in g, failure()", "after g: failed", "finally succeeded"], "\(r)")
    }

    // MARK: cancellation

    /// "The first SIGINT or SIGTERM: start no new step; … then run `finally` and rollback":
    /// a step whose `if` is `always()` or `cancelled()` (which would run after a cancel in
    /// GitHub Actions) is not started either, nor a group's; the `finally` is where
    /// `cancelled()` is true (docs/workflow-format.md, Cancellation).
    @Test func afterTheFirstSignalNoStepStartsWhateverItsIf() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: work
                shell: $CHILD --stderr ready --sleep 30
              - { name: always, if: always(), shell: echo always >> log }
              - { name: on_cancel, if: cancelled(), shell: echo on_cancel >> log }
              - name: group
                sequential:
                  - { name: inside, shell: echo inside >> log }
                if: always()
            finally:
              - { name: cleanup, if: cancelled(), shell: "echo cleanup ${{ run.status }} >> log" }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "json"])
        #expect(flow.waitFor { stdout, _ in stdout.contains("\"line\":\"ready\"") }, "\(flow.stderr)")
        flow.signal(SIGINT)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 130, "\(r)")
        #expect(box.lines("log") == ["cleanup cancelled"], "\(r)")
        for name in ["always", "on_cancel", "group", "inside"] {
            #expect(r.states(of: name) == ["skipped"], "\(name): \(r)")
        }
    }

    /// SIGTERM during a step deep in nested groups: every enclosing `finally` runs, inside
    /// out (they "are not cancelled by the first interrupt"), the later steps never start,
    /// and then the rollback reverses what succeeded, latest first ("after all `finally`
    /// blocks"), a concurrent sibling that had finished included; exit 143.
    @Test func aSignalInNestedGroupsRunsEveryFinallyInsideOutThenRollsBack() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: echo a >> log
                undo: { shell: echo undo-a >> log }
              - name: outer
                sequential:
                  - name: b
                    shell: echo b >> log
                    undo: { shell: echo undo-b >> log }
                  - name: inner
                    concurrent:
                      - name: c
                        shell: echo c >> log; touch c-done
                        undo:
                          shell: echo "undo-c ${{ run.status }}" >> log
                      - name: work
                        shell: while [ ! -f c-done ]; do sleep 0.01; done; exec $CHILD --stderr ready --sleep 30
                        undo: { shell: echo undo-work >> log }
                    finally:
                      - shell: echo "inner-finally ${{ run.status }} ${{ steps.work.status }}" >> log
                  - name: never
                    shell: echo never >> log
                finally:
                  - shell: echo "outer-finally ${{ run.status }}" >> log
            finally:
              - shell: echo "root-finally ${{ run.status }}" >> log
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("work | ready"), "\(flow.stderr)")
        flow.signal(SIGTERM)
        let r = try flow.finish(timeout: 15)
        #expect(r.status == 143, "\(r)")
        #expect(box.lines("log") == ["a", "b", "c", "inner-finally cancelled cancelled", "outer-finally cancelled",
                                     "root-finally cancelled", "undo-c cancelled", "undo-b", "undo-a"], "\(r)")
        #expect(box.leftoverProcesses().isEmpty)
    }

    // MARK: outputs

    /// "Inside `finally`, the steps of the group count as finished", and "a whole
    /// `concurrent` group once it is over" (docs/workflow-format.md, the `steps.X` rule):
    /// at run time the group's `finally`, the steps after the group and the root's
    /// `finally` read the outputs of every step of the concurrent group, and an `undo`
    /// those of its step and of the steps before it.
    @Test func aConcurrentGroupsOutputsReachItsFinallyAndTheStepsAfterIt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: first
                shell: echo "id=one" >> "$FLOW_OUTPUT"
              - name: grp
                concurrent:
                  - name: x
                    shell: echo "k=kx" >> "$FLOW_OUTPUT"
                  - name: y
                    shell: echo "k=ky" >> "$FLOW_OUTPUT"
                    undo:
                      print: "undo y: ${{ steps.y.outputs.k }} ${{ steps.first.outputs.id }}"
                finally:
                  - print: "grp finally: ${{ steps.x.outputs.k }} ${{ steps.y.outputs.k }}"
              - print: "after: ${{ steps.x.outputs.k }} ${{ steps.y.outputs.k }}"
              - shell: exit 1
            finally:
              - print: "root finally: ${{ steps.y.outputs.k }} ${{ steps.first.outputs.id }}"
            """)
        let r = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(r.status == 1, "\(r)")
        #expect(r.stdoutLines == ["grp finally: kx ky", "after: kx ky", "root finally: ky one", "undo y: ky one"], "\(r)")
    }
}
