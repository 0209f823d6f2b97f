import FlowKit

/// One run as the journal knows it.
public struct RunRecord: Sendable {
    public var id: String
    public var kind: String
    public var parentID: String?
    /// The workflow file as given to `flow run`, as shown: a name that is not UTF-8 has its
    /// bad bytes as `\xFF` (see `workflowPathBytes`).
    public var workflowPath: String
    public var workflowName: String
    public var contentHash: String
    public var content: [UInt8]
    public var args: RunArguments
    /// The directory the run started in, as shown (see `cwdBytes`).
    public var cwd: String
    /// The bytes of `workflowPath` and `cwd` when they are not UTF-8; nil when they are, and
    /// in runs recorded before the journal kept them.
    public var workflowPathBytes: [UInt8]?
    public var cwdBytes: [UInt8]?
    public var startedAt: Double
    public var endedAt: Double?
    /// `running`, `succeeded`, `failed`, `cancelled`, or `interrupted` (its process died).
    public var state: String
    public var exitStatus: Int?
    public var pid: Int
    public var host: String
    public var totalSteps: Int
    /// Whether the run's `args` could not be read back (a row edited by hand or by another
    /// tool): `args` then holds none, which are not the arguments it ran with.
    public var argsDamaged = false
    /// Whether the journal kept the outputs of each instance of its steps (a retried
    /// group's step succeeds once per attempt), so `flow undo` can reverse every one: false
    /// for runs recorded before it did (v6), which are undone one result per step.
    public var instanceOutputs = false
    /// Leaf steps per final state.
    public var counts: [String: Int] = [:]
    /// Of `counts`, the steps whose failure `continue_on_error` allowed, by state (`failed`,
    /// `timed_out`); none in runs recorded before the journal kept it.
    public var allowedFailures: [String: Int] = [:]

    /// The file name the run was given, as bytes: what opens it.
    public var workflowPathName: [UInt8] { workflowPathBytes ?? Array(workflowPath.utf8) }
    /// Whether the run read its workflow from standard input (`flow run -`): there is no
    /// file to reopen, and the content recorded with the run is the workflow.
    public var readStandardInput: Bool { workflowPath == "-" && workflowPathBytes == nil }
    /// The workflow file as messages name it: `<stdin>` for standard input, as `flow run -`
    /// itself said (the journal keeps the `-` that was given).
    public var workflowDisplayPath: String { readStandardInput ? LoadedWorkflow.stdinName : workflowPath }
    /// The run's directory as bytes: what enters it.
    public var cwdName: [UInt8] { cwdBytes ?? Array(cwd.utf8) }

    /// The counts as the history shows them: `5 succeeded, 1 failed`, `-` when there are none.
    /// Every state is shown, in the order of a step's life; one this flow does not know (a
    /// newer flow's) comes last rather than not at all. Allowed failures are said as the
    /// live summary says them (`ReporterStyle.summary`): `2 failed (1 allowed)`, `1 failed
    /// (allowed)` when all were.
    public var countsSummary: String {
        let order = ["succeeded", "failed", "timed_out", "cancelled", "skipped", "pending", "running", "retrying",
                     RunRecord.interrupted, "undoing", "undo_interrupted", "undone", "undo_failed"]
        let rest = counts.keys.filter { !order.contains($0) }.sorted()
        let parts = (order + rest).compactMap { state -> String? in
            guard let count = counts[state], count > 0 else { return nil }
            return "\(count) \(state)" + RunOutcome.allowedNote(count: count, allowed: allowedFailures[state] ?? 0)
        }
        return parts.isEmpty ? "-" : parts.joined(separator: ", ")
    }

    /// Still running, or its process died before the run's last transaction.
    var isUnfinished: Bool { state == "running" || state == Self.interrupted }

    /// The state of a run whose process died before it recorded its end (told by its lock).
    public static let interrupted = "interrupted"
}

/// One step of a recorded run.
public struct StepRecord: Sendable {
    public var path: String
    public var position: Int
    public var depth: Int
    public var name: String?
    public var kind: String
    /// The short description of trees (the `label` column): the name, else the command,
    /// message or duration as written (`PlanNode.summary`).
    public var summary: String
    public var state: String
    public var attempts: Int
    public var exitCode: Int?
    public var startedAt: Double?
    public var endedAt: Double?
    public var completedSeq: Int?
    /// The signal that ended its latest attempt (its `exitCode` is then the shell's 128 + it).
    public var signal: Int?
    /// Its `failed` or `timed_out` did not fail the run (`continue_on_error`): false in runs
    /// recorded before the journal kept it.
    public var allowedFailure = false
    public var outputs: [String: String] = [:]
    /// Which run `completedSeq` counts in: 0 this one; 1 the run it resumed, for a step it
    /// did not reach or reused from there; 2 the run before that… (see `Journal.carriedSteps`).
    public var generation = 0
    /// The run whose record holds the step's state: nil for the run read; for a step
    /// `Journal.carriedSteps` carried on from an earlier run, the run that reached it.
    /// Its result is that run's step at this path, which the run read may have had
    /// another step at (a resume with `--force` of an edited file).
    public var origin: String?
    /// For one instance of a step that succeeded (`Journal.undoableSteps`): which of the
    /// step's successes in the run it is, from 1, and how many the step had (a retried
    /// group's step succeeds once per attempt). 1 of 1 otherwise.
    public var success = 1
    public var successes = 1

    /// Whether this step completed before `other` (both succeeded in a run or the runs it
    /// carries on): a step of an earlier run before every step of a later one, and within
    /// a run by `completedSeq`. The order `flow undo` reverses, and the one a resume's own
    /// rollback reverses its reused steps in.
    public func completed(before other: StepRecord) -> Bool {
        (other.generation, completedSeq ?? Int.max) < (generation, other.completedSeq ?? Int.max)
    }

    /// Whether another step of the run has the same name (the steps of an action used
    /// twice): its label is then `name@path`, as the live output had it.
    public var sharesName = false

    /// This step as the history (`runs`, `show`) shows it in a run in `runState`. In an
    /// `interrupted` run (its process died) a step that was `running` or `retrying` reads
    /// `interrupted`, and one being undone `undo_interrupted`: nothing drives them any more,
    /// and `running` read as if the step still ran. Not states a step goes through, but
    /// what the journal knows of it, as `interrupted` is for the run; `resume` and `undo` go
    /// by the recorded state.
    public func shown(inRun runState: String) -> StepRecord {
        guard runState == RunRecord.interrupted else { return self }
        var step = self
        switch state {
        case "running", "retrying": step.state = RunRecord.interrupted
        case "undoing": step.state = "undo_interrupted"
        default: break
        }
        return step
    }

    /// What the live output calls the step (`StepRef.label`): its name (`name@path` when it
    /// `sharesName`), or `KIND@PATH`. Derived from the stored name, kind and path, so
    /// journals written before it read alike.
    public var label: String {
        guard let name else { return "\(kind)@\(path)" }
        return sharesName ? "\(name)@\(path)" : name
    }

    /// Whether it runs something itself (`print`, `delay`, `shell`), rather than being a
    /// group of steps (`sequential`, `concurrent`, `use`).
    public var isLeaf: Bool { kind == "shell" || kind == "print" || kind == "delay" }

    /// `records` (a run's steps) with `sharesName` set, as `Executor.sharedNameLabels` does.
    public static func markingSharedNames(_ records: [StepRecord]) -> [StepRecord] {
        var count: [String: Int] = [:]
        for record in records { if let name = record.name { count[name, default: 0] += 1 } }
        guard count.values.contains(where: { $0 > 1 }) else { return records }
        return records.map { record in
            var record = record
            record.sharesName = record.name.map { count[$0, default: 0] > 1 } ?? false
            return record
        }
    }
}

/// Recorded output: consecutive lines of one step and stream (one row of the journal).
public struct LineRecord: Sendable {
    public var id: Int64
    public var path: String
    public var stream: String
    public var time: Double
    /// The lines as the step printed them, each but the last ending in a newline: a `\r`
    /// before a newline (CRLF output) and bytes that are not UTF-8 are kept. Only the
    /// newline separates lines.
    public var bytes: [UInt8]
}
