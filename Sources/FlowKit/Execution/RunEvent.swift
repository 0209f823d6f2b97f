/// Everything that happens in a run, as one stream that reporters and the journal observe.
public enum RunEvent: Sendable {
    case runStarted(RunInfo)
    /// A step moved from one state to another.
    case stepState(StepTransition)
    /// A message flow itself prints about a step (a retry wait, an undo failure…).
    /// `allowing`: the paths whose failure it makes an allowed one, after their ends went
    /// out unmarked (a retry called off, see `Executor.calledOff`); empty for most notes.
    case note(StepRef?, String, allowing: [String] = [])
    case runFinished(RunOutcome)
}

/// The facts of a run known when it starts.
public struct RunInfo: Sendable {
    public var id: String
    public var workflowName: String
    public var file: String
    public var startedAt: Timestamp
    public var totalSteps: Int
}

/// One state change of one step.
public struct StepTransition: Sendable {
    public var step: StepRef
    public var from: StepState
    public var to: StepState
    public var attempt: Int
    public var exitCode: Int32?
    /// For `signaled` terminations.
    public var signal: Int32?
    /// Why (e.g. "missing declared output `version`").
    public var reason: String?
    public var time: Timestamp
    /// Seconds since the step started running (for final states).
    public var elapsed: Double?
    /// On `succeeded`: the outputs the step wrote.
    public var outputs: [String: String]?

    /// The reason of a step `flow resume` takes from run `id` instead of running it.
    public static func reusedReason(from id: String) -> String { "reused from run \(id)" }

    /// The reason of a step `--only`, `--tags` or `--skip-tags` left out.
    public static let notSelectedReason = "not selected"

    /// The reason of a step `flow undo` leaves alone (nothing to undo, it did not succeed in
    /// the run, an earlier undo reversed it): the only skips of an undo, which its counts
    /// leave out.
    public static let notUndoneReason = "not undone by this run"

    /// The reason of a step `flow undo` reverses, recorded first as run `id` left it (not
    /// "reused": nothing of it is used again).
    public static func reversedReason(from id: String) -> String { "succeeded in run \(id)" }

    /// `reversedReason` of the `success`-th of a step's `successes` successes in run `id`
    /// (a retried group's step succeeds once per attempt): the count is said only when there
    /// were several, `succeeded in run ID (success 1 of 2)`.
    public static func reversedReason(from id: String, success: Int, of successes: Int) -> String {
        successes > 1 ? "\(reversedReason(from: id)) (success \(success) of \(successes))" : reversedReason(from: id)
    }

    /// Which success a `reversedReason` names; nil when it names none, which is the step's
    /// latest: it succeeded once, or the undo was recorded by a flow from before the count was
    /// said (one without v6, which reversed one result per step, the latest; it still writes
    /// to a v6 journal).
    public static func reversedSuccess(in reason: String) -> Int? {
        guard reason.hasSuffix(")"), let open = reason.ranges(of: " (success ").last else { return nil }
        return Int(reason[open.upperBound...].prefix { $0.isNumber })
    }

    /// The reason of a group that failed because a step inside it did (or its `finally`):
    /// that step's own end says why.
    public static let insideFailedReason = "a step inside failed"

    /// A group that failed by itself, with no failure inside it to say why (a `use` given a
    /// value not `allowed` at run time): reporters show its end as they show a leaf's.
    public var isGroupsOwnFailure: Bool {
        !step.isLeaf && to == .failed && reason != Self.insideFailedReason
    }

    /// An end that belongs to rolling a step back, of any kind (a `print` or a group with
    /// `undo` steps too): the step reversed (`undone`, `undo_failed`) or, under
    /// `flow undo`, recorded as the earlier run left it before its undo steps run. Text
    /// reporters that write end lines write these for every step, so that `rolling back N
    /// steps` is followed by N of them.
    public var isRollbackEnd: Bool {
        if to == .undone || to == .undoFailed { return true }
        return to == .succeeded && reason?.hasPrefix("succeeded in run ") == true
    }

    /// A failure that does not fail the run: a `failed` or `timed_out` end of a step
    /// `continue_on_error` covers (its own, or a group's around it). Its state stays
    /// `failed` (or `timed_out`); reporters say it was allowed, as GitHub Actions marks a
    /// step with `continue-on-error` that failed while its job passes.
    public var isAllowedFailure: Bool {
        step.failureAllowed && (to == .failed || to == .timedOut)
    }

    /// How the output marks an allowed failure: `✗ soft exit 3 (allowed to fail)`; `flow
    /// show` marks the step's row alike.
    public static let allowedFailureMark = "allowed to fail"

    /// A step taken from an earlier run (resume) or recorded as it was there (undo): it
    /// did not run now, and its reason says where it comes from.
    public var isFromEarlierRun: Bool {
        guard let reason else { return false }
        return reason.hasPrefix("reused from run ") || reason.hasPrefix("succeeded in run ")
    }
}

/// How a run ended.
public struct RunOutcome: Sendable {
    public var status: RunStatus
    public var exitCode: Int32
    public var counts: [StepState: Int]
    public var elapsed: Double
    public var time: Timestamp
    /// Of `counts`, the `failed` and `timed_out` steps whose failure was allowed
    /// (`StepTransition.isAllowedFailure`); a state with none is left out.
    public var allowedFailures: [StepState: Int] = [:]

    /// What a summary says after a count of `count` steps, `allowed` of them allowed
    /// failures: ` (allowed)` when all were, ` (1 allowed)` when some were, nothing when none
    /// was. The live summary and `flow runs`/`flow show` say it alike.
    public static func allowedNote(count: Int, allowed: Int) -> String {
        allowed == 0 ? "" : allowed == count ? " (allowed)" : " (\(allowed) allowed)"
    }
}
