import CFlowSQLite
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import FlowJournal

/// `flow undo` of a run whose retried group ran a step more than once reverses what the
/// run's own rollback would have: every instance that succeeded and was not reversed
/// already, latest first, each undo seeing that instance's outputs. It reversed the
/// latest recorded result only: once, with the last attempt's outputs, and not at all when
/// the last attempt failed, skipped or never finished the step (what attempt 1 created
/// leaked).
@Suite struct UndoInstancesTests {
    /// A retried group whose `create` makes `r1`, `r2`… (one per attempt that runs it) and
    /// whose undo says which it deletes. `createTail` ends `create`'s command; `more`
    /// follows it in the group (the group fails in every attempt unless `more` says
    /// otherwise: `check` always fails).
    static func workflow(createIf: String? = nil, createTail: String = "", undoTail: String = "",
                         before: String = "", more: String = "") -> String {
        """
        steps:
          - name: grp
            retry: 1
            sequential:
        \(before)      - name: create
        \(createIf.map { "        if: \($0)\n" } ?? "")        shell: n=$(cat n 2>/dev/null || echo 0); n=$((n+1)); echo $n > n; echo "id=r$n" >> "$FLOW_OUTPUT"\(createTail)
                outputs: [id]
                undo:
                  shell: echo "deleting ${{ steps.create.outputs.id }}" >> log\(undoTail)
        \(more)      - { name: check, shell: exit 1 }
        """
    }

    /// The id of the newest run of kind `run`.
    static func runID(_ box: RunSandbox) throws -> String {
        try #require(try JournalEndToEndTests.runs(box).first { $0["kind"] as? String == "run" }?["id"] as? String)
    }

    /// `create` succeeded in attempt 1 and failed in attempt 2: `flow undo` deletes what
    /// attempt 1 made (it left it: the step's latest state is `failed`).
    @Test func undoReversesAStepThatSucceededOnlyInAnEarlierAttempt() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow(createTail: "; test $n = 1"))
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let id = try Self.runID(box)
        let undo = try box.run(["undo", id, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["deleting r1"], "\(undo)")
        #expect(undo.stderrLines.contains("✓ create succeeded in run \(id)"), "one success: said as before: \(undo)")
        // `show` of the run still has one row per step, the latest instance's.
        let shown = try JournalEndToEndTests.show(box, id)
        #expect(JournalEndToEndTests.step(named: "create", in: shown)?["state"] as? String == "failed", "\(shown)")
        let again = try box.run(["undo", id])
        #expect(again.status == 2 && again.stderr.contains("was already undone by run"), "\(again)")
    }

    /// `create` succeeded in both attempts: `flow undo` deletes both, the latest first, each
    /// with its own id; a second undo is refused, and `--force` deletes both again.
    @Test func undoReversesEveryAttemptThatSucceededLatestFirst() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow())
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let id = try Self.runID(box)
        let undo = try box.run(["undo", id, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["deleting r2", "deleting r1"], "\(undo)")
        #expect(undo.stderrLines.contains("rolling back 2 steps"), "\(undo)")
        #expect(undo.stderrLines.contains("✓ create succeeded in run \(id) (success 1 of 2)"), "\(undo)")
        #expect(undo.stderrLines.contains("✓ create succeeded in run \(id) (success 2 of 2)"), "\(undo)")
        // One row per step in `show`, of the run and of the undo.
        let shown = try JournalEndToEndTests.show(box, id)
        let create = JournalEndToEndTests.step(named: "create", in: shown)
        #expect(create?["state"] as? String == "succeeded" && create?["outputs"] as? [String: String] == ["id": "r2"], "\(shown)")
        let undone = try JournalEndToEndTests.show(box)
        #expect(((undone["steps"] as? [[String: Any]]) ?? []).filter { $0["name"] as? String == "create" }.count == 1, "\(undone)")
        #expect(JournalEndToEndTests.step(named: "create", in: undone)?["state"] as? String == "undone", "\(undone)")
        let again = try box.run(["undo", id])
        #expect(again.status == 2 && again.stderr.contains("was already undone by run"), "\(again)")
        #expect(try box.run(["undo", id, "--force"]).status == 0)
        #expect(box.lines("log") == ["deleting r2", "deleting r1", "deleting r2", "deleting r1"])
    }

    /// `create` succeeded in attempt 1 and was skipped by its `if` in attempt 2: `flow
    /// undo` deletes what attempt 1 made.
    @Test func undoReversesAnAttemptBeforeOneThatSkippedTheStep() throws {
        let box = try RunSandbox()
        let probe = """
                  - name: probe
                    shell: test -e probed && echo first=no >> "$FLOW_OUTPUT" || { touch probed; echo first=yes >> "$FLOW_OUTPUT"; }

            """
        try box.write("wf.yaml", Self.workflow(createIf: "steps.probe.outputs.first == 'yes'", before: probe))
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let id = try Self.runID(box)
        #expect(JournalEndToEndTests.step(named: "create", in: try JournalEndToEndTests.show(box, id))?["state"] as? String == "skipped")
        let undo = try box.run(["undo", id, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["deleting r1"], "\(undo)")
    }

    /// A run SIGKILLed in attempt 2 (its rollback never ran): `flow undo` deletes what the
    /// attempts made, `create` of attempt 2 included, latest first; when flow was killed
    /// while attempt 2's `create` ran, what attempt 1's made.
    @Test(arguments: [false, true])
    func undoOfARunKilledInALaterAttemptReversesTheEarlierOnes(killedInCreate: Bool) throws {
        let box = try RunSandbox()
        // flow is the shell's parent: killed as by the OOM killer or a CI runner's timeout.
        let hang = """
                  - name: hang
                    shell: 'test "$(cat n)" = 1 || kill -KILL $PPID'

            """
        let workflow = killedInCreate
            ? Self.workflow(createTail: "; test $n = 1 || kill -KILL $PPID")
            : Self.workflow(more: hang)
        try box.write("wf.yaml", workflow)
        let killed = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(killed.status == 128 + SIGKILL, "\(killed)")
        #expect(box.lines("log") == [], "no rollback ran: \(killed)")
        let id = try Self.runID(box)
        #expect(try JournalEndToEndTests.runs(box).first?["state"] as? String == "interrupted")
        let undo = try box.run(["undo", id, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == (killedInCreate ? ["deleting r1"] : ["deleting r2", "deleting r1"]), "\(undo)")
    }

    /// The run's own rollback deleted r2 and failed to delete r1: `flow undo` tries r1
    /// again, and only r1 (it was refused: the step's latest instance was `undone`). Once
    /// r1 is deleted too, `flow undo` is refused as for any run its rollback reversed.
    @Test func undoTriesAgainOnlyTheAttemptsWhoseRollbackFailed() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow(undoTail: "; test ${{ steps.create.outputs.id }} != r1 || test -e fixed"))
        #expect(try box.run(["run", "wf.yaml"]).status == 1)
        let id = try Self.runID(box)
        #expect(box.lines("log") == ["deleting r2", "deleting r1"])
        // Still failing: an undo that fails to reverse r1, then one that does.
        #expect(try box.run(["undo", id]).status == 1)
        try box.write("fixed", "")
        let undo = try box.run(["undo", id, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(undo.stderrLines.contains("✓ create succeeded in run \(id) (success 1 of 2)"), "\(undo)")
        #expect(!undo.stderrLines.contains { $0.contains("(success 2 of 2)") }, "\(undo)")
        #expect(box.lines("log") == ["deleting r2", "deleting r1", "deleting r1", "deleting r1"], "\(undo)")
        let again = try box.run(["undo", id])
        #expect(again.status == 2 && again.stderr.contains("was already undone by run"), "\(again)")

        // A rollback that reversed every attempt leaves nothing to undo (exit 2); it said
        // `nothing to roll back` (exit 0) when the last attempt failed the step.
        let other = try RunSandbox()
        try other.write("wf.yaml", Self.workflow(createTail: "; test $n = 1"))
        #expect(try other.run(["run", "wf.yaml"]).status == 1)
        #expect(other.lines("log") == ["deleting r1"])
        let refused = try other.run(["undo", try Self.runID(other)])
        #expect(refused.status == 2 && refused.stderr.contains("was already rolled back by its own rollback (1 step undone)"), "\(refused)")
        #expect(other.lines("log") == ["deleting r1"])
    }

    /// The undo of each attempt's `create` sees the outputs of the steps of that attempt
    /// before it (`tag`, which has no undo), as the run's own rollback shows it: `flow undo`
    /// gave every one the last attempt's.
    @Test func eachUndoSeesTheStepsOfItsOwnAttempt() throws {
        let tag = """
                  - name: tag
                    shell: m=$(cat m 2>/dev/null || echo 0); m=$((m+1)); echo $m > m; echo "v=t$m" >> "$FLOW_OUTPUT"

            """
        let workflow = Self.workflow(before: tag).replacing(
            "deleting ${{ steps.create.outputs.id }}", with: "deleting ${{ steps.create.outputs.id }} tagged ${{ steps.tag.outputs.v }}")
        let expected = ["deleting r2 tagged t2", "deleting r1 tagged t1"]
        let rolledBack = try RunSandbox()
        try rolledBack.write("wf.yaml", workflow)
        #expect(try rolledBack.run(["run", "wf.yaml"]).status == 1)
        #expect(rolledBack.lines("log") == expected)
        let box = try RunSandbox()
        try box.write("wf.yaml", workflow)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let undo = try box.run(["undo", try Self.runID(box), "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == expected, "\(undo)")
    }

    /// A resume whose retried group reused `login` in its first attempt and logged in again
    /// in its second: `flow undo` of it logs out of both, the new login first, as the
    /// resume's own rollback does (`JournalEndToEndTests.aRetriedGroupInAResumeRunsItsStepsAgainOnRetry`);
    /// it logged out of the new one only.
    @Test func undoOfAResumeReversesTheReusedInstanceAndTheOneRunAgain() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            steps:
              - name: grp
                retry: 1
                sequential:
                  - name: login
                    shell: n=$(cat n 2>/dev/null || echo 0); echo $((n+1)) > n; echo "tok=t$n" >> "$FLOW_OUTPUT"
                    undo:
                      shell: echo "logout ${{ steps.login.outputs.tok }}" >> log
                  - { name: push, shell: test -f ok }
            """)
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        #expect(try box.run(["resume", "last", "--no-rollback"]).status == 1)
        let resumeID = try #require(try JournalEndToEndTests.runs(box).first?["id"] as? String)
        #expect(box.lines("log") == [])
        let undo = try box.run(["undo", resumeID, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["logout t2", "logout t1"], "\(undo)")
    }

    /// A run recorded before the journal kept each instance's outputs (v5) is undone as
    /// before: one result per step, the latest, with its outputs. The journal is the one a
    /// run records now, copied into a v5 one as a flow of then wrote it.
    @Test func undoOfARunRecordedBeforeV6ReversesOneResultPerStep() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", Self.workflow())
        let recorded = box.root.appendingPathComponent("recorded").path
        #expect(try box.run(["run", "wf.yaml", "--no-rollback", "--state-dir", recorded]).status == 1)
        try FileManager.default.createDirectory(atPath: box.state.path + "/locks", withIntermediateDirectories: true)
        do {
            let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
            try db.execute("PRAGMA journal_mode = WAL")
            try JournalSchema.migrate(db, upTo: "v5")
            try db.execute("ATTACH DATABASE '\(recorded)/journal.sqlite' AS now")
            try db.execute("""
                INSERT INTO runs SELECT id, kind, parent_id, workflow_path, workflow_name, content_hash, content, args, cwd,
                    started_at, ended_at, state, exit_status, pid, host, total_steps, workflow_path_bytes, cwd_bytes FROM now.runs;
                INSERT INTO steps SELECT * FROM now.steps;
                INSERT INTO attempts SELECT * FROM now.attempts;
                INSERT INTO transitions SELECT * FROM now.transitions;
                INSERT INTO outputs SELECT run_id, path, key, value FROM now.outputs o
                    WHERE seq = (SELECT MAX(seq) FROM now.outputs l WHERE l.run_id = o.run_id AND l.path = o.path);
                """)
            try db.execute("DETACH DATABASE now")
        }
        let id = try Self.runID(box)
        let undo = try box.run(["undo", id, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["deleting r2"], "\(undo)")
        #expect(undo.stderrLines.contains("✓ create succeeded in run \(id)"), "\(undo)")
        #expect(JournalEndToEndTests.step(named: "create", in: try JournalEndToEndTests.show(box, id))?["outputs"] as? [String: String]
                == ["id": "r2"])
    }
}

/// `flow undo` after an undo recorded by a flow from before v6, which still reads and writes
/// a v6 journal and reverses one result per step, the latest, recording it without a count.
@Suite struct UndoAfterAnOlderFlowsUndoTests {
    /// Makes the newest undo run look as a flow from before v6 records one: the step's
    /// latest success reversed, said `succeeded in run ID`, and nothing more of it.
    static func asAnOlderFlowsUndo(_ box: RunSandbox, path: String, successes: Int) throws {
        let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        let undos: [String] = try db.values("SELECT id FROM runs WHERE kind = 'undo' ORDER BY started_at DESC, rowid DESC LIMIT 1")
        let undo = try #require(undos.first)
        let latest = " (success \(successes) of \(successes))"
        // Only the reversal of the latest success stays (the first `undoing` and what ends it).
        let kept: [Int] = try db.values("""
            SELECT seq FROM transitions WHERE run_id = ? AND path = ? AND to_state IN ('undoing', 'undone', 'undo_failed')
            ORDER BY seq LIMIT 2
            """, [undo, path])
        try db.execute("""
            DELETE FROM transitions WHERE run_id = ? AND path = ? AND (
                (to_state IN ('running', 'succeeded') AND reason NOT LIKE ?)
                OR (to_state IN ('undoing', 'undone', 'undo_failed') AND seq NOT IN (?, ?)))
            """, [undo, path, "%" + latest, kept[0], kept[1]])
        try db.execute("UPDATE transitions SET reason = replace(reason, ?, '') WHERE run_id = ? AND path = ?", [latest, undo, path])
    }

    /// An older flow's `flow undo` deleted r2, the step's latest instance: `flow undo` now
    /// deletes r1, and only r1 (it took the older undo's reversal for success 1, deleted r2
    /// a second time and left r1).
    @Test func undoAfterAnOlderFlowsUndoReversesTheEarlierInstancesOnly() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", UndoInstancesTests.workflow())
        #expect(try box.run(["run", "wf.yaml", "--no-rollback"]).status == 1)
        let id = try UndoInstancesTests.runID(box)
        #expect(try box.run(["undo", id]).status == 0)
        #expect(box.lines("log") == ["deleting r2", "deleting r1"])
        try Self.asAnOlderFlowsUndo(box, path: "1.1", successes: 2)
        try box.write("log", "deleting r2\n")
        let undo = try box.run(["undo", id, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["deleting r2", "deleting r1"], "\(undo)")
        #expect(!undo.stderrLines.contains { $0.contains("(success 2 of 2)") }, "\(undo)")
        let again = try box.run(["undo", id])
        #expect(again.status == 2 && again.stderr.contains("was already undone by run"), "\(again)")
    }
}

/// A run recorded per instance that died, its lock file folded in by a flow from before v6
/// (which still reads and writes a v6 journal): that flow wrote the folded outputs with
/// `seq` 0, one set per step, the last folded instance's.
@Suite struct OutputsAnOlderFlowFoldedInTests {
    /// Attempt 1's `create` (r1) was committed by the run; attempt 2's (r2) was in the lock
    /// file when the run was SIGKILLed, and an older flow folded it in. `show` gives the
    /// step r2 (it gave r1, the lowest `seq` read as the earliest), and `flow undo` reverses
    /// one result per step, r2, as for a run recorded before v6: attempt 1's outputs are
    /// gone (it reversed r1 and then an instance with no outputs at all, `deleting `).
    @Test func outputsAnOlderFlowFoldedInAreTheLatestAndTheRunIsUndoneOneResultPerStep() throws {
        let box = try RunSandbox()
        let hang = """
                  - name: hang
                    shell: 'test "$(cat n)" = 1 || kill -KILL $PPID'

            """
        try box.write("wf.yaml", UndoInstancesTests.workflow(more: hang))
        #expect(try box.run(["run", "wf.yaml"]).status == 128 + SIGKILL)
        let id = try UndoInstancesTests.runID(box)  // folds the lock file in, each instance's outputs by its seq
        do {
            // As the older flow's fold leaves them: r2 with seq 0.
            let db = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
            try db.execute("UPDATE outputs SET seq = 0 WHERE run_id = ? AND value = 'r2'", [id])
            let kept: [Int] = try db.values("SELECT seq FROM outputs WHERE run_id = ? ORDER BY seq", [id])
            #expect(kept.count == 2 && kept[0] == 0 && kept[1] > 0, "\(kept)")
        }
        let shown = try JournalEndToEndTests.show(box, id)
        #expect(JournalEndToEndTests.step(named: "create", in: shown)?["outputs"] as? [String: String] == ["id": "r2"], "\(shown)")
        let undo = try box.run(["undo", id, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["deleting r2"], "\(undo)")
    }
}

/// A step reversed once per attempt that succeeded whose earlier instance's undo failed
/// after its latest one's was undone.
@Suite struct EarlierInstanceUndoFailedTests {
    /// Both in `flow undo` and in the run's own rollback, the summary, `runs` and `show` say
    /// the step's undo failed (they said `1 undone`, beside `✗ create undo failed` and a
    /// failed rollback).
    @Test(arguments: [false, true])
    func aStepWhoseEarlierInstancesUndoFailedIsUndoFailed(byFlowUndo: Bool) throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", UndoInstancesTests.workflow(undoTail: "; test ${{ steps.create.outputs.id }} != r1"))
        let ran = try box.run(["run", "wf.yaml", "--output", "prefixed"] + (byFlowUndo ? ["--no-rollback"] : []))
        #expect(ran.status == 1)
        let rollback = byFlowUndo ? try box.run(["undo", try UndoInstancesTests.runID(box), "--output", "prefixed"]) : ran
        #expect(rollback.status == 1, "\(rollback)")
        #expect(box.lines("log") == ["deleting r2", "deleting r1"], "\(rollback)")
        let summary = try #require(rollback.stderrLines.last { $0.hasPrefix("✗ failed:") })
        #expect(summary.contains("1 undo_failed") && !summary.contains("undone"), "\(rollback)")
        let shown = try JournalEndToEndTests.show(box)
        #expect(JournalEndToEndTests.step(named: "create", in: shown)?["state"] as? String == "undo_failed", "\(shown)")
        let counts = try #require(try JournalEndToEndTests.runs(box).first?["counts"] as? [String: Int])
        #expect(counts["undo_failed"] == 1 && counts["undone"] == nil, "\(counts)")
    }
}

/// A run SIGKILLed in its rollback after it reversed every instance of a retried group's step:
/// its lock file is folded in whole.
@Suite struct RollbackOfInstancesFoldedInTests {
    /// The rollback deleted r2, then r1, and flow was killed in the next undo (`first`'s).
    /// The fold stopped at r1's `succeeded → undoing` (the step's latest state was r2's
    /// `undone`), losing r1's reversal and the rest: `flow undo` then deleted r1 again.
    /// Now it runs `first`'s undo only.
    @Test func aKilledRollbackOfEveryInstanceIsFoldedInWhole() throws {
        let box = try RunSandbox()
        // `first` completed before the group: its undo comes after every `create`'s.
        let first = """
              - name: first
                shell: "true"
                undo:
                  shell: echo "undo first" >> log; test -e killed || { touch killed; kill -KILL $PPID; }

            """
        try box.write("wf.yaml", UndoInstancesTests.workflow().replacing("steps:\n", with: "steps:\n" + first))
        let killed = try box.run(["run", "wf.yaml", "--output", "prefixed"])
        #expect(killed.status == 128 + SIGKILL, "\(killed)")
        #expect(box.lines("log") == ["deleting r2", "deleting r1", "undo first"], "\(killed)")
        let id = try UndoInstancesTests.runID(box)
        let shown = try JournalEndToEndTests.show(box, id)
        #expect(JournalEndToEndTests.step(named: "first", in: shown)?["state"] as? String == "undo_interrupted", "\(shown)")
        #expect(JournalEndToEndTests.step(named: "create", in: shown)?["state"] as? String == "undone", "\(shown)")
        let undo = try box.run(["undo", id, "--output", "prefixed"])
        #expect(undo.status == 0, "\(undo)")
        #expect(box.lines("log") == ["deleting r2", "deleting r1", "undo first", "undo first"], "\(undo)")
    }
}
