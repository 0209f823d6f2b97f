import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The history says which failures `continue_on_error` allowed, as the live run did: `flow
/// runs`, `flow show` (text and `--json`) and `runs --json`, for a finished run, a killed
/// one, a resume and an undo (docs/journal.md, docs/cli.md "Allowed failures").
@Suite struct AllowedFailureHistoryTests {
    /// The `flow show` row of the step labelled `name` (its line in the tree).
    static func row(_ show: FlowOutcome, _ name: String) -> String? {
        show.stdout.split(separator: "\n").map(String.init).first { $0.hasPrefix("✗ \(name)  [") || $0.hasPrefix("✓ \(name)  [") }
    }

    /// `show --json`'s step named `name`.
    static func step(_ show: [String: Any], _ name: String) -> [String: Any]? {
        (show["steps"] as? [[String: Any]])?.first { $0["name"] as? String == name }
    }

    /// The STEPS column of `flow runs`' newest run.
    static func stepsColumn(_ box: RunSandbox) throws -> String {
        let runs = try box.run(["runs", "--limit", "1"])
        #expect(runs.status == 0, "\(runs)")
        let row = runs.stdoutLines.count > 1 ? runs.stdoutLines[1] : ""
        return row.components(separatedBy: "  ").last ?? ""
    }

    /// A run that failed with an allowed failure beside one that failed it, and one that
    /// succeeded with allowed failures only: the history counts and marks them as the live
    /// summary and end lines did.
    @Test(arguments: [(RunEndingTests.mixed, "1 succeeded, 2 failed (1 allowed), 1 skipped"),
                      (RunEndingTests.allowedOnly, "2 succeeded, 2 failed (allowed)")])
    func theHistoryCountsAndMarksAllowedFailuresAsTheRunDid(_ workflow: String, _ counts: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", workflow)
        let run = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        let summary = TTYOutputTests.timeless(run.stderrLines).last { $0.contains(" in T") } ?? ""
        #expect(summary.hasSuffix(": \(counts) in T"), "\(run)")
        #expect(try Self.stepsColumn(box) == counts)
        let show = try box.run(["show", "last"])
        #expect(show.stdout.hasSuffix("steps: \(counts)\n"), "\(show)")
        #expect(Self.row(show, "soft")?.contains("[failed (allowed to fail) · exit ") == true, "\(show)")
        let json = try JournalEndToEndTests.show(box)
        #expect(Self.step(json, "soft")?["allowed_failure"] as? Bool == true, "\(json)")
        #expect(Self.step(json, "ok")?["allowed_failure"] == nil, "only when true, as in the events: \(json)")
        let listed = try #require(try JournalEndToEndTests.runs(box).first)
        let allowedCount = workflow == RunEndingTests.mixed ? 1 : 2
        #expect(listed["allowed_failures"] as? [String: Int] == ["failed": allowedCount], "\(listed)")
        #expect(json["allowed_failures"] as? [String: Int] == ["failed": allowedCount], "\(json)")
        if workflow == RunEndingTests.mixed {
            #expect(Self.row(show, "bad")?.contains("[failed · exit 2") == true, "a failure that failed the run: \(show)")
            #expect(Self.step(json, "bad")?["allowed_failure"] == nil, "\(json)")
        } else {
            // A group's own failure, allowed by its `continue_on_error`: its row says so, and
            // the step inside, whose failure is the group's, is counted allowed.
            #expect(show.stdout.contains("✗ grp  [failed (allowed to fail) · "), "\(show)")
            #expect(show.stdout.contains("  ✗ inner  [failed (allowed to fail) · exit 4"), "\(show)")
        }
    }

    /// Inside a group with `continue_on_error` and `retry`, a step's failure in an attempt
    /// the retry follows is what makes the group retry: no mode marks it allowed, only its
    /// failure in the last attempt, which the history and the JUnit report then show.
    @Test func aStepInsideARetriedGroupIsAllowedToFailInTheLastAttemptOnly() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                continue_on_error: true
                retry: 1
                sequential:
                  - { name: inner, shell: exit 4 }
            """)
        let raw = try box.run(["run", "wf.yaml", "--output", "raw"])
        #expect(raw.status == 0, "\(raw)")
        #expect(TTYOutputTests.timeless(raw.stderrLines).filter { $0.hasPrefix("✗ inner") }
                == ["✗ inner exit 4 T", "✗ inner exit 4 (allowed to fail) T"], "\(raw)")
        let grouped = try box.run(["run", "wf.yaml", "--output", "grouped", "--junit", "report.xml"])
        #expect(TTYOutputTests.timeless(grouped.stdoutLines + grouped.stderrLines).filter { $0.hasPrefix("── ✗ inner") }
                == ["── ✗ inner (exit 4 T) ──", "── ✗ inner (exit 4 T; allowed to fail) ──"], "\(grouped)")
        let show = try box.run(["show", "last"])
        #expect(show.stdout.contains("  ✗ inner  [failed (allowed to fail) · exit 4"), "\(show)")
        #expect(show.stdout.hasSuffix("steps: 1 failed (allowed)\n"), "\(show)")
        let report = box.read("report.xml") ?? ""
        #expect(report.contains(#"<skipped message="exit 4 (allowed to fail)"/>"#), "\(report)")
        #expect(report.contains(#"failures="0""#), "\(report)")
    }

    /// A run with no allowed failure: nothing is marked, and `allowed_failures` is `{}`.
    @Test func aRunWithoutAllowedFailuresMarksNothing() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n  - { name: bad, shell: exit 2 }\n")
        _ = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(try Self.stepsColumn(box) == "1 failed")
        let show = try box.run(["show", "last"])
        #expect(!show.stdout.contains("allowed"), "\(show)")
        let listed = try #require(try JournalEndToEndTests.runs(box).first)
        #expect(listed["allowed_failures"] as? [String: Int] == [:], "\(listed)")
    }

    /// flow killed (SIGKILL) after an allowed failure: the next `flow` folds the run's lock
    /// file in, and the interrupted run still says the failure was allowed.
    @Test func aKilledRunKeepsItsAllowedFailure() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: soft, shell: exit 3, continue_on_error: true }
              - { name: crash, shell: kill -KILL $PPID }
            """)
        let killed = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(killed.status == 128 + SIGKILL, "\(killed)")
        #expect(try Self.stepsColumn(box) == "1 failed (allowed), 1 interrupted")
        let show = try box.run(["show", "last"])
        #expect(Self.row(show, "soft")?.contains("[failed (allowed to fail) · exit 3") == true, "\(show)")
        let json = try JournalEndToEndTests.show(box)
        #expect(json["state"] as? String == "interrupted")
        #expect(Self.step(json, "soft")?["allowed_failure"] as? Bool == true, "\(json)")
        #expect(json["allowed_failures"] as? [String: Int] == ["failed": 1], "\(json)")
    }

    /// A live run, read while it runs (its latest transitions in its lock file or the
    /// database): the allowed failure it already had is marked.
    @Test func aLiveRunShowsItsAllowedFailure() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: soft, shell: exit 3, continue_on_error: true }
              - { name: wait, shell: "echo ready; while [ ! -f go ]; do sleep 0.01; done" }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("wait | ready"), "\(flow.stderr)")
        let json = try JournalEndToEndTests.show(box)
        #expect(json["state"] as? String == "running")
        #expect(Self.step(json, "soft")?["allowed_failure"] as? Bool == true, "\(json)")
        #expect(try Self.stepsColumn(box) == "1 failed (allowed), 1 running")
        _ = try box.write("go", "")
        #expect(try flow.finish().status == 0)
        #expect(try Self.stepsColumn(box) == "1 succeeded, 1 failed (allowed)")
    }

    /// A retry called off, read back while the run goes on and once it is killed: both are
    /// rebuilt from the run's transitions (not its `steps` rows, written at its end), and
    /// the note's mark reaches the failure's transition with the next commit (at most a
    /// quarter of a second later, hence the wait below for a state that must come). They
    /// said `[failed · exit 3]` and `1 failed` while the live output said it was allowed.
    @Test func aRetryCalledOffIsAllowedInTheHistoryOfALiveAndAKilledRun() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                timeout: 200ms
                continue_on_error: true
                sequential:
                  - { name: flaky, shell: exit 3, retry: { limit: 2, delay: 1h } }
              - { name: wait, shell: "echo ready; while [ ! -f go ]; do sleep 0.01; done" }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("wait | ready"), "\(flow.stderr)")
        let deadline = Date().addingTimeInterval(20)
        var show = try box.run(["show", "last"])
        while !show.stdout.contains("  ✗ flaky  [failed (allowed to fail)"), Date() < deadline {
            show = try box.run(["show", "last"])
        }
        #expect(show.stdout.contains("  ✗ flaky  [failed (allowed to fail) · exit 3"), "\(show)")
        #expect(try Self.stepsColumn(box) == "1 failed (allowed), 1 timed_out (allowed), 1 running")
        flow.signal(SIGKILL)
        _ = try flow.finish()
        let killed = try box.run(["show", "last"])
        #expect(killed.stdout.contains("  ✗ flaky  [failed (allowed to fail) · exit 3"), "\(killed)")
        #expect(try Self.stepsColumn(box) == "1 failed (allowed), 1 timed_out (allowed), 1 interrupted")
    }

    /// A resume runs a step whose failure was allowed again (it did not succeed): allowed
    /// again if it fails again, unmarked once it succeeds.
    @Test func aResumeRunsAnAllowedFailureAgainAndMarksItAnew() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - { name: soft, shell: "echo ran >> soft.log; test -f soft-ok || exit 3", continue_on_error: true }
              - { name: hard, shell: test -f hard-ok }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 1)
        #expect(try Self.stepsColumn(box) == "2 failed (1 allowed)")
        let again = try box.run(["resume", "last", "--output", "prefixed"])
        #expect(again.status == 1, "\(again)")
        #expect(box.lines("soft.log") == ["ran", "ran"], "not reused: it did not succeed")
        #expect(try Self.stepsColumn(box) == "2 failed (1 allowed)")
        #expect(Self.row(try box.run(["show", "last"]), "soft")?.contains("(allowed to fail)") == true)
        _ = try box.write("soft-ok", "")
        _ = try box.write("hard-ok", "")
        #expect(try box.run(["resume", "last", "--output", "prefixed"]).status == 0)
        #expect(box.lines("soft.log").count == 3)
        #expect(try Self.stepsColumn(box) == "2 succeeded")
        let show = try box.run(["show", "last"])
        #expect(!show.stdout.contains("allowed"), "\(show)")
        // The runs before keep what they were.
        let runs = try JournalEndToEndTests.runs(box)
        #expect(runs.map { $0["allowed_failures"] as? [String: Int] } == [[:], ["failed": 1], ["failed": 1]], "\(runs)")
    }

    /// `flow undo` of a run with an allowed failure leaves that run's history as it was, and
    /// an undo step whose failure its `continue_on_error` allows is marked in the undo run.
    @Test func anUndoKeepsTheRunsMarksAndMarksItsOwn() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: a
                shell: "true"
                undo:
                  - { name: back, shell: exit 5, continue_on_error: true }
              - { name: soft, shell: exit 3, continue_on_error: true }
            """)
        #expect(try box.run(["run", "wf.yaml", "--output", "prefixed"]).status == 0)
        let runID = try #require(try JournalEndToEndTests.runs(box).first?["id"] as? String)
        let undo = try box.run(["undo", "last", "--output", "prefixed"])
        #expect(undo.stderr.contains("back exit 5 (allowed to fail)"), "\(undo)")
        let undone = try box.run(["show", "last"])
        #expect(undone.stdout.contains("✗ undo back  [failed (allowed to fail) · exit 5"), "\(undone)")
        let original = try box.run(["show", runID])
        #expect(Self.row(original, "soft")?.contains("(allowed to fail)") == true, "\(original)")
        #expect(original.stdout.hasSuffix("steps: 1 succeeded, 1 failed (allowed)\n"), "\(original)")
    }

    /// A run cancelled while a step (or a group) waits out its retry's delay: the failed
    /// attempt is its end after all, and `continue_on_error` covers it. Its `→ failed` went
    /// out as one a retry follows, without the mark; the note that says the announced retry
    /// will not come carries it, and everything counts it allowed (the counts, `flow show`,
    /// `flow runs`); until 2026-11-27 it stayed unmarked everywhere.
    @Test(arguments: [
        ("s", "- { name: s, shell: exit 3, continue_on_error: true, retry: { limit: 1, delay: 1h } }"),
        ("grp", "- { name: grp, continue_on_error: true, retry: { limit: 1, delay: 1h }, sequential: [{ name: inner, shell: exit 3 }] }"),
    ])
    func aRetryCalledOffByASignalEndsInTheAllowedFailure(retried: String, step: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              \(step)
              - { name: later, shell: "true" }
            """)
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        #expect(flow.waitForLine("\(retried): retrying (attempt 2 of 2) in 1h"), "\(flow.stderr)")
        flow.signal(SIGTERM)
        let r = try flow.finish()
        #expect(r.status == 128 + SIGTERM, "\(r)")
        let lines = r.stderr.components(separatedBy: "\n")
        let heard = lines.firstIndex { $0.hasPrefix("SIGTERM: stopping") }
        let calledOff = lines.firstIndex(of: "\(retried): not retried: the run was cancelled (allowed to fail)")
        #expect(heard != nil && calledOff != nil && heard! < calledOff!, "\(r.stderr)")
        #expect(r.stderr.contains("⊘ cancelled: 1 failed (allowed), 1 skipped in"), "\(r.stderr)")
        #expect(try Self.stepsColumn(box) == "1 failed (allowed), 1 skipped")
        let show = try box.run(["show", "last"])
        #expect(show.stdout.hasSuffix("steps: 1 failed (allowed), 1 skipped\n"), "\(show)")
        let json = try JournalEndToEndTests.show(box)
        #expect(json["allowed_failures"] as? [String: Int] == ["failed": 1], "\(json)")
    }

    /// A step's retry called off by its group's `timeout`, the group allowed to fail (and a
    /// group's retry so, the steps inside it): the run passes, and every report says so.
    /// The failure counted unmarked: `1 failed` beside the allowed time-out, and a JUnit
    /// report with `failures="1"` and a GitHub `::error::` for a job that passed.
    @Test(arguments: [
        ("flaky", "flaky", "1 succeeded, 1 failed (allowed), 1 timed_out (allowed)", ["1.1"], """
            - name: g
              timeout: 200ms
              continue_on_error: true
              sequential:
                - { name: flaky, shell: exit 3, retry: { limit: 2, delay: 1h } }
            """),
        ("grp", "inner", "2 succeeded, 1 failed (allowed), 1 timed_out (allowed)", ["1.1", "1.1.2"], """
            - name: g
              timeout: 200ms
              continue_on_error: true
              sequential:
                - name: grp
                  retry: { limit: 1, delay: 1h }
                  sequential:
                    - { name: ok, shell: "true" }
                    - { name: inner, shell: exit 3 }
            """),
    ])
    func aRetryCalledOffByAnAllowedGroupsTimeoutLeavesTheRunPassing(retried: String, failed: String, counts: String,
                                                                     allowing: [String], group: String) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", "steps:\n" + group.split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
                      + "\n  - { name: later, shell: \"true\" }\n")
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderrLines.contains("\(retried): not retried: stopped while waiting to retry (allowed to fail)"), "\(r)")
        let summary = TTYOutputTests.timeless(r.stderrLines).last { $0.contains(" in T") } ?? ""
        #expect(summary == "✓ succeeded: \(counts) in T", "\(r)")
        let report = box.read("report.xml") ?? ""
        #expect(report.contains(#"failures="0""#) && !report.contains("<failure"), "\(report)")
        #expect(report.contains(#"<skipped message="exit 3 (allowed to fail)"/>"#), "\(report)")
        #expect(try Self.stepsColumn(box) == counts)
        let show = try box.run(["show", "last"])
        #expect(show.stdout.contains("✗ \(failed)  [failed (allowed to fail) · exit 3"), "\(show)")
        #expect(show.stdout.hasSuffix("steps: \(counts)\n"), "\(show)")

        let json = try box.run(["run", "wf.yaml", "--output", "json"])
        let events = json.stdoutLines.compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let note = events.first { $0["event"] as? String == "note" && ($0["message"] as? String)?.hasPrefix("not retried") == true }
        #expect(note?["allowed_failure"] as? Bool == true && note?["allowed_steps"] as? [String] == allowing, "\(json)")
        let finished = events.last { $0["event"] as? String == "run_finished" }
        #expect(finished?["allowed_failures"] as? [String: Int] == ["failed": 1, "timed_out": 1], "\(json)")

        let grouped = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(grouped.status == 0 && !grouped.stdout.contains("::error"), "\(grouped)")
        #expect(grouped.stdout.contains("::warning title=flow step \(failed) failed (allowed)::"), "\(grouped)")

        guard pseudoTerminalsAvailable else { return }
        let tty = try TerminalRun(box, ["run", "wf.yaml", "--no-journal", "--output", "tty"], rows: 20, columns: 80)
        #expect(tty.finish() == 0, "\(tty.report)")
        #expect(TTYOutputTests.timeless(tty.screen.all).contains { $0.hasSuffix("✗ \(failed) exit 3 (allowed to fail) T") },
                "\(tty.report)")
    }

    /// A group with `retry` stopped in an attempt a retry was to follow (here by the
    /// `timeout` of a group around it with `continue_on_error`): the failure inside that
    /// attempt is its step's end, an allowed one, and the run that passes counts it so. It
    /// counted `1 failed` and JUnit said `failures="1"` (a nested group's retry called off
    /// while it waited, and a concurrent attempt cut short, alike).
    @Test(arguments: [
        ("g", """
            - name: g
              retry: 1
              fail_fast: false
              concurrent:
                - { name: bad, shell: exit 3 }
                - { name: slow, shell: sleep 30 }
            """),
        ("g", """
            - name: g
              retry: 1
              sequential:
                - name: h
                  retry: { limit: 1, delay: 1h }
                  sequential:
                    - { name: bad, shell: exit 3 }
            """),
    ])
    func aRetriedGroupCutShortInsideAnAllowedGroupLeavesTheRunPassing(group: String, body: String) throws {
        let box = try RunSandbox()
        let inner = body.split(separator: "\n").map { "        " + $0 }.joined(separator: "\n")
        try box.write("wf.yaml", """
            steps:
              - name: o
                timeout: 300ms
                continue_on_error: true
                sequential:
            \(inner)
              - { name: later, shell: "true" }

            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(r.status == 0, "\(r)")
        #expect(r.stderrLines.contains("\(group): not retried: stopped before its retry (allowed to fail)"), "\(r)")
        let summary = TTYOutputTests.timeless(r.stderrLines).last { $0.contains(" in T") } ?? ""
        #expect(summary.hasPrefix("✓ succeeded: 1 succeeded, 1 failed (allowed), 1 timed_out (allowed)"), "\(r)")
        let report = box.read("report.xml") ?? ""
        #expect(report.contains(#"failures="0""#) && !report.contains("<failure"), "\(report)")
        let show = try box.run(["show", "last"])
        #expect(show.stdout.contains("✗ bad  [failed (allowed to fail) · exit 3"), "\(show)")
        let grouped = try box.run(["run", "wf.yaml", "--output", "grouped"], env: ["GITHUB_ACTIONS": "true"])
        #expect(grouped.status == 0 && !grouped.stdout.contains("::error"), "\(grouped)")
    }

    /// A group that failed inside a group whose retry was called off (`g`, its wait ended by
    /// the `timeout` of `o` around it) or cut short (`g` in a concurrent attempt): its
    /// failure is its end too, an allowed one, as that of the step inside it that failed.
    /// Every display with a row for it marks it: `flow show` (and `--json`), the note's
    /// `allowed_steps` and the live tree; the counts, which count leaves, stay as they were.
    /// Until 2026-11-28 `h` kept an unmarked `✗ h  [failed · 0.0s]` row in a run that passed.
    @Test(arguments: [
        ("g: not retried: stopped while waiting to retry (allowed to fail)", ["1.1", "1.1.1", "1.1.1.1"],
         "1 succeeded, 1 failed (allowed), 1 timed_out (allowed)", """
            - name: g
              retry: { limit: 1, delay: 1h }
              sequential:
                - name: h
                  sequential:
                    - { name: bad, shell: exit 3 }
            """),
        ("g: not retried: stopped before its retry (allowed to fail)", ["1.1.1", "1.1.1.1"],
         "1 succeeded, 1 failed (allowed), 1 timed_out (allowed), 1 cancelled", """
            - name: g
              retry: 1
              fail_fast: false
              concurrent:
                - name: h
                  sequential:
                    - { name: bad, shell: exit 3 }
                - { name: slow, shell: sleep 30 }
            """),
    ])
    func aNestedGroupThatFailedInAnAttemptCalledOffIsAnAllowedFailure(note: String, allowing: [String], counts: String,
                                                                       body: String) throws {
        let box = try RunSandbox()
        let inner = body.split(separator: "\n").map { "        " + $0 }.joined(separator: "\n")
        try box.write("wf.yaml", """
            steps:
              - name: o
                timeout: 300ms
                continue_on_error: true
                sequential:
            \(inner)
              - { name: later, shell: "true" }

            """)
        let r = try box.run(["run", "wf.yaml", "--output", "prefixed", "--junit", "report.xml"])
        #expect(r.status == 0 && r.stderrLines.contains(note), "\(r)")
        let summary = TTYOutputTests.timeless(r.stderrLines).last { $0.contains(" in T") } ?? ""
        #expect(summary == "✓ succeeded: \(counts) in T", "\(r)")
        // A group is no case of its own: the report is as it was.
        let report = box.read("report.xml") ?? ""
        #expect(report.contains(#"failures="0""#) && !report.contains("<failure") && !report.contains(#"name="h""#), "\(report)")
        let show = try box.run(["show", "last"])
        #expect(show.stdout.contains("    ✗ h  [failed (allowed to fail) · "), "\(show)")
        #expect(show.stdout.contains("      ✗ bad  [failed (allowed to fail) · exit 3"), "\(show)")
        #expect(show.stdout.hasSuffix("steps: \(counts)\n"), "\(show)")
        let json = try JournalEndToEndTests.show(box)
        #expect(Self.step(json, "h")?["allowed_failure"] as? Bool == true, "\(json)")
        #expect(json["allowed_failures"] as? [String: Int] == ["failed": 1, "timed_out": 1], "\(json)")

        let events = try box.run(["run", "wf.yaml", "--output", "json"]).stdoutLines
            .compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
        let marked = events.first { ($0["message"] as? String)?.hasPrefix("not retried: stopped") == true }
        #expect(marked?["allowed_steps"] as? [String] == allowing, "\(events)")
        #expect(events.last?["allowed_failures"] as? [String: Int] == ["failed": 1, "timed_out": 1], "\(events)")

        guard pseudoTerminalsAvailable else { return }
        let tty = try TerminalRun(box, ["run", "wf.yaml", "--no-journal", "--output", "tty"], rows: 20, columns: 80)
        #expect(tty.finish() == 0, "\(tty.report)")
        let screen = TTYOutputTests.timeless(tty.screen.all)
        #expect(screen.contains("    ✗ h allowed to fail T") && screen.contains("      ✗ bad exit 3 (allowed to fail) T"),
                "\(tty.report)")
    }

    /// `--output grouped --quiet` keeps the blocks of failures for the run's end: the block
    /// of a failure a called-off retry made the allowed one says so in its title, as its
    /// annotation does. The title was the unmarked one its `→ failed` had.
    @Test func aQuietBlockOfARetryCalledOffSaysTheFailureWasAllowed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: g
                timeout: 300ms
                continue_on_error: true
                sequential:
                  - { name: flaky, shell: "echo out; exit 3", retry: { limit: 2, delay: 1h } }

            """)
        let r = try box.run(["run", "wf.yaml", "--output", "grouped", "--quiet", "--no-journal"], env: ["GITHUB_ACTIONS": "true"])
        #expect(r.status == 0, "\(r)")
        let titles = TTYOutputTests.timeless(r.stdoutLines).filter { $0.hasPrefix("::group::") }
        #expect(titles.first == "::group::✗ flaky (exit 3 T; allowed to fail)", "\(r)")
        #expect(r.stdout.contains("::warning title=flow step flaky failed (allowed)::"), "\(r)")
    }
}
