/// Identifies one execution of a plan node in events: its path, name and label.
public struct StepRef: Sendable, Hashable {
    public var path: String
    public var name: String?
    public var kind: String
    /// The action a `use` step runs (nil for other kinds): `--output json` names it, as
    /// `flow plan --format json` does, since a `use` step's name says which use, not what.
    public var action: String?
    /// What output shows for the step: its name, or its kind and path.
    public var label: String
    /// Set for the steps of an `undo` block (they run during rollback).
    public var isUndo: Bool
    /// Set for a shell step with `interactive: true`: it writes to flow's stdout and stderr
    /// (the terminal) itself, so reporters never see where it left off.
    public var isInteractive: Bool
    /// Set when the step failing does not fail the run: `continue_on_error` on it or on a
    /// group around it (within its `undo` block, for an undo step). Reporters mark such a
    /// step's `failed` or `timed_out` end as allowed (see `StepTransition.isAllowedFailure`).
    public var failureAllowed: Bool
    /// Set for a step inside a group with `retry`: it may start again in the same run as a
    /// new instance (its `attempt` from 1 again), which `AttemptMarks` counts by path.
    /// Most steps are in none: nothing is counted for them.
    public var inRetriedGroup: Bool = false

    /// `label`, when given, replaces the node's own (`name@path` for a name that several
    /// steps of the plan have).
    public init(node: PlanNode, isUndo: Bool = false, label: String? = nil, failureAllowed: Bool = false) {
        path = node.path
        name = node.name
        kind = node.keyword
        self.label = label ?? node.label
        self.isUndo = isUndo
        self.failureAllowed = failureAllowed
        switch node.kind {
        case .shell(let task): isInteractive = task.interactive
        case .use(let name, _): isInteractive = false; action = name
        default: isInteractive = false
        }
    }

    /// Whether the step is a leaf (counted in summaries).
    public var isLeaf: Bool { kind == "print" || kind == "delay" || kind == "shell" }
}
