import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif
@testable import FlowJournal

/// SIGKILL at any instant leaves a journal that opens and tells a consistent story: a run
/// of ~30 quick steps is killed at a point spread over its whole duration, then `runs`,
/// `show` and `resume` are checked. Trials run a few at a time on plain threads (they
/// block on processes); each returns its problems, which the test reports.
@Suite struct CrashConsistencyTests {
    static let trials = 50
    static let workers = 4

    /// 31 steps: prints, `true`, outputs used later, a concurrent group, a nested group, a
    /// few short delays (so that the run, not flow's start-up, fills most of the kill window)
    /// and a `finally`.
    static let workflow = """
        name: crash
        steps:
          - print: start
          - name: s1
            shell: "true"
          - name: out1
            shell: echo "v=one" >> "$FLOW_OUTPUT"; echo wrote v
          - name: p2
            print: "v is ${{ steps.out1.outputs.v }}"
          - name: s2
            shell: echo second
          - print: before group
          - name: grp
            max_parallel: 4
            concurrent:
              - { name: c1, shell: echo c1 }
              - { name: c2, shell: "true" }
              - { name: c3, shell: echo "k=3" >> "$FLOW_OUTPUT" }
              - { name: c4, shell: echo c4 >&2 }
              - { name: c5, shell: "true" }
              - { name: c6, shell: echo c6 }
              - { name: cp1, print: in group }
              - { name: cp2, print: also in group }
          - name: p3
            print: "k is ${{ steps.c3.outputs.k }}"
          - name: nested
            sequential:
              - print: nested one
              - name: n1
                shell: echo "w=${{ steps.out1.outputs.v }}-n" >> "$FLOW_OUTPUT"
              - print: nested two
          - name: s3
            shell: echo "${{ steps.n1.outputs.w }}"
          - delay: 40ms
          - delay: 40ms
          - name: s4
            shell: "true"
          - delay: 40ms
          - delay: 40ms
          - name: s5
            shell: echo fifth
          - print: end
        finally:
          - print: "finally ${{ run.status }}"
          - name: f2
            shell: "true"
        """

    struct Tally {
        var unrecorded = 0
        var interrupted = 0
        var succeeded = 0
        var failed = 0
        var problems: [String] = []
    }

    @Test func sigkillAtAnyMomentLeavesAConsistentJournal() throws {
        // How long a whole run takes here and now, with as many runs at once as the trials.
        let references = try (0..<Self.workers).map { _ in try RunSandbox() }
        let starts = try references.map { box in
            try box.write("wf.yaml", Self.workflow)
            return try box.start(["run", "wf.yaml", "--output", "prefixed"])
        }
        var duration = 0.0
        var stderrLines = 0
        for flow in starts {
            let full = try flow.finish(timeout: 60)
            #expect(full.status == 0, "\(full)")
            #expect(full.stdout.contains("finally succeeded"), "\(full)")
            duration = max(duration, full.elapsed)
            stderrLines = full.stderrLines.count
        }
        let window = duration
        let lines = stderrLines

        let tally = LockedValue(Tally())
        let next = LockedValue(0)
        let done = DispatchGroup()
        for _ in 0..<Self.workers {
            done.enter()
            Thread {
                while true {
                    let trial = next.withLock { value -> Int in
                        defer { value += 1 }
                        return value
                    }
                    if trial >= Self.trials { break }
                    let point = Self.killPoint(trial, window: window, stderrLines: lines)
                    let outcome = Self.trial(trial, at: point)
                    tally.withLock { t in
                        switch outcome.state {
                        case nil: t.unrecorded += 1
                        case "interrupted": t.interrupted += 1
                        case "succeeded": t.succeeded += 1
                        default: t.failed += 1
                        }
                        t.problems += outcome.problems.map { "trial \(trial) (kill \(point)): \($0)" }
                    }
                }
                done.leave()
            }.start()
        }
        done.wait()
        let result = tally.withLock { $0 }
        print("crash trials (run \(String(format: "%.2f", window))s, \(lines) progress lines): \(result.interrupted) interrupted, "
              + "\(result.succeeded) succeeded, \(result.failed) failed, \(result.unrecorded) killed before the journal existed")
        #expect(result.problems.isEmpty, "\(result.problems.count) problems:\n\(result.problems.prefix(20).joined(separator: "\n"))")
        #expect(result.unrecorded + result.interrupted + result.succeeded + result.failed == Self.trials)
        #expect(result.interrupted >= 20,
                "kills should land mid-run: \(result.interrupted) interrupted, \(result.succeeded) succeeded, \(result.unrecorded) unrecorded")
    }

    /// A `flow` killed right after SQLite made `journal.sqlite` leaves it empty, not yet in
    /// WAL mode, as is a journal being created. While another connection wrote it (a `flow
    /// runs` that opened it beside the creator's first write), the next `flow run` failed at
    /// once with "database is locked", said as "stayed locked by another process for 10 s",
    /// and ran unrecorded: SQLite refuses the switch to WAL without calling the busy handler
    /// (found by the randomized SIGKILL audit, about 1 in 300 kills in flow's first
    /// milliseconds with `flow runs` in a loop beside it). flow waits for that lock as for
    /// any other, and records the run.
    @Test func aRunWaitsForAWriterOfAnEmptyJournal() throws {
        let box = try RunSandbox()
        try box.write("wf.yaml", """
            name: empty-journal
            steps:
              - name: first
                shell: |
                  # At most 5 s: a flow that gave the journal up has closed it.
                  i=0
                  until ls -l /proc/$PPID/fd | grep -q 'journal[.]sqlite$' || [ $i -ge 500 ]; do i=$((i+1)); sleep 0.01; done
                  echo first ran >&2
              - name: second
                shell: "true"
            """)
        try FileManager.default.createDirectory(at: box.state, withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: box.state.path + "/journal.sqlite", contents: nil))
        let writer = try SQLiteConnection(path: box.state.path + "/journal.sqlite")
        try writer.execute("BEGIN IMMEDIATE")
        let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
        // The first step says so once flow (its parent) has the journal open, and so has
        // gone on, or is about to, to the switch to WAL that the lock refuses.
        #expect(flow.waitForLine("first | first ran"), "\(flow.stdout)\(flow.stderr)")
        try writer.execute("ROLLBACK")
        let run = try flow.finish(timeout: 60)
        #expect(run.status == 0, "\(run)")
        #expect(!run.stderr.contains("journal"), "\(run.stderr)")
        let runs = try box.run(["runs", "--json"])
        let list = try #require(try JSONSerialization.jsonObject(with: Data(runs.stdout.utf8)) as? [[String: Any]], "\(runs)")
        #expect(list.count == 1 && list.first?["state"] as? String == "succeeded", "\(runs.stdout)")
        #expect((list.first?["counts"] as? [String: Int]) == ["succeeded": 2], "\(runs.stdout)")
    }

    /// When a trial kills flow.
    enum KillPoint: CustomStringConvertible {
        /// A fixed time after the spawn (covers start-up and journal creation too).
        case after(seconds: Double)
        /// Right after flow reported progress line `line` on stderr (a step started or
        /// ended), plus `micros` of jitter: spreads the kills over every part of the run
        /// whatever the machine's speed.
        case afterProgress(line: Int, micros: UInt32)

        var description: String {
            switch self {
            case .after(let seconds): String(format: "after %.3fs", seconds)
            case .afterProgress(let line, let micros): "after progress line \(line) + \(micros)µs"
            }
        }
    }

    /// The first dozen trials kill at times spread from 0 to a little past the run's
    /// length; the others right after each of flow's progress lines in turn.
    static func killPoint(_ trial: Int, window: Double, stderrLines: Int) -> KillPoint {
        let timed = 12
        if trial < timed { return .after(seconds: window * 1.2 * Double(trial) / Double(timed - 1)) }
        let k = trial - timed
        let line = 1 + k * max(stderrLines - 1, 1) / max(trials - timed - 1, 1)
        return .afterProgress(line: line, micros: UInt32((k % 4) * 1500))
    }

    /// One trial: run, SIGKILL at `point`, then check the journal and resume.
    static func trial(_ index: Int, at point: KillPoint) -> (state: String?, problems: [String]) {
        var problems: [String] = []
        do {
            let box = try RunSandbox()
            try box.write("wf.yaml", workflow)
            let flow = try box.start(["run", "wf.yaml", "--output", "prefixed"])
            switch point {
            case .after(let seconds):
                if seconds > 0 { usleep(UInt32(seconds * 1_000_000)) }
            case .afterProgress(let line, let micros):
                _ = flow.waitFor(timeout: 30) { _, err in err.split(separator: "\n").count >= line }
                if micros > 0 { usleep(micros) }
            }
            flow.signal(SIGKILL)
            guard let status = flow.waitExit(timeout: 10) else { return (nil, ["flow did not die of SIGKILL"]) }
            // A child of the killed run may still be finishing: SIGKILL cannot be forwarded.
            box.killLeftovers()

            let runs = try box.run(["runs", "--json"], timeout: 30)
            if runs.status == 2 && runs.stderr.contains("no journal") && !box.exists("state/journal.sqlite") {
                return (nil, [])  // killed before the journal was created
            }
            guard runs.status == 0 else { return (nil, ["flow runs --json: \(runs)"]) }
            guard let list = (try? JSONSerialization.jsonObject(with: Data(runs.stdout.utf8))) as? [[String: Any]] else {
                return (nil, ["flow runs --json is not a JSON array: \(runs.stdout.prefix(300))"])
            }
            guard let run = list.first else {
                // Killed before the run was recorded: nothing to check, but nothing may be half there.
                if list.count != 0 { problems.append("unexpected runs: \(list)") }
                return (nil, problems)
            }
            if list.count != 1 { problems.append("\(list.count) runs recorded for one run") }
            let state = run["state"] as? String ?? "?"
            let exitStatus = run["exit_status"] as? Int
            switch state {
            case "succeeded":
                if status != 0 && status != 128 + SIGKILL { problems.append("flow exited \(status)") }
                if exitStatus != 0 { problems.append("succeeded with exit_status \(String(describing: exitStatus))") }
                if run["ended_at"] is NSNull || run["ended_at"] == nil { problems.append("succeeded without ended_at") }
            case "interrupted":
                if exitStatus != nil { problems.append("interrupted with exit_status \(exitStatus!)") }
            case "failed":
                break
            default:
                problems.append("unexpected state \(state)")
            }

            let show = try box.run(["show", "last", "--json"], timeout: 30)
            guard show.status == 0,
                  let shown = (try? JSONSerialization.jsonObject(with: Data(show.stdout.utf8))) as? [String: Any] else {
                return (state, problems + ["flow show last --json: \(show)"])
            }
            if shown["state"] as? String != state { problems.append("show says \(shown["state"] ?? "nil"), runs says \(state)") }
            let steps = (shown["steps"] as? [[String: Any]]) ?? []
            problems += checkSteps(steps, runState: state)
            let text = try box.run(["show", "last"], timeout: 30)
            if text.status != 0 { problems.append("flow show last: \(text)") }

            if state == "interrupted" || state == "failed" {
                let resumed = try box.run(["resume", "last", "--output", "prefixed"], timeout: 60)
                if resumed.status != 0 { problems.append("flow resume last: \(resumed)") }
                if !resumed.stdout.contains("finally succeeded") { problems.append("resumed run did not finish: \(resumed)") }
                // Steps that run again see the outputs of steps reused from the killed run.
                for line in resumed.stdoutLines.map(LiveFlow.squeeze) {
                    let expected = ["s3 | ": "s3 | one-n", "p2 | ": "p2 | v is one", "p3 | ": "p3 | k is 3"]
                    for (prefix, whole) in expected where line.hasPrefix(prefix) && line != whole {
                        problems.append("outputs were not carried through the resume: \(line)")
                    }
                }
                let after = try box.run(["runs", "--json"], timeout: 30)
                let newest = ((try? JSONSerialization.jsonObject(with: Data(after.stdout.utf8))) as? [[String: Any]])?.first
                if newest?["kind"] as? String != "resume" || newest?["state"] as? String != "succeeded" {
                    problems.append("after resume: \(after.stdout.prefix(400))")
                }
            }
            if !box.leftoverProcesses().isEmpty { problems.append("processes left behind") }
            return (state, problems)
        } catch {
            return (nil, ["\(error)"])
        }
    }

    /// The top-level steps of a sequential run form a prefix: succeeded ones, then at most
    /// one that was running, then pending ones. A succeeded run has every step succeeded.
    static func checkSteps(_ steps: [[String: Any]], runState: String) -> [String] {
        var problems: [String] = []
        let known: Set<String> = ["pending", "running", "succeeded", "failed", "timed_out", "cancelled", "skipped", "retrying",
                                  "undoing", "undone", "undo_failed"]
        // A step in flight when the run's process died reads `interrupted`, as the run does.
        let stepStates = runState == "interrupted" ? known.subtracting(["running", "retrying", "undoing"]).union(["interrupted"]) : known
        for step in steps {
            let state = step["state"] as? String ?? "nil"
            if !stepStates.contains(state) { problems.append("step \(step["path"] ?? "?") in state \(state) (run \(runState))") }
        }
        let top = steps.filter { ($0["path"] as? String).map { !$0.contains(".") && !$0.hasPrefix("f") } ?? false }
            .sorted { Int($0["path"] as! String)! < Int($1["path"] as! String)! }
        if top.count != 17 { problems.append("\(top.count) top-level steps in the journal, expected 17") }
        let states = top.map { $0["state"] as? String ?? "nil" }
        if runState == "succeeded" {
            let bad = steps.filter { $0["state"] as? String != "succeeded" }
            if !bad.isEmpty { problems.append("succeeded run with steps \(bad.map { "\($0["path"] ?? "?")=\($0["state"] ?? "?")" })") }
        } else {
            let firstOpen = states.firstIndex { $0 != "succeeded" } ?? states.count
            let rest = states.dropFirst(firstOpen + 1)
            if rest.contains(where: { $0 != "pending" }) { problems.append("top-level states are not a prefix: \(states)") }
            if firstOpen < states.count, !["interrupted", "running", "pending"].contains(states[firstOpen]) {
                problems.append("top-level step \(firstOpen + 1) is \(states[firstOpen]) in an interrupted run: \(states)")
            }
        }
        return problems
    }
}

/// A value shared by the trial threads.
final class LockedValue<Value>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    init(_ value: Value) { self.value = value }

    func withLock<T>(_ body: (inout Value) -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body(&value)
    }
}
