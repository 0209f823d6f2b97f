import FlowKit

/// Whether a step of a plan is the step a run recorded at its path (`flow resume --force`).
extension StepRecord {
    /// Why `node`, at this record's path in the workflow as it is now, is not the step the
    /// run recorded there; nil when it is. `recordedNode` is the node at that path in the
    /// plan of the content the run recorded, when that still plans.
    ///
    /// Steps are matched by path, and a path is a position: an edit that inserts a step
    /// before others gives the earlier run's result at that position to the inserted step,
    /// and each later step its predecessor's. So a reused step must have the recorded name,
    /// kind, and what it does (its command, message or duration as written: the `label`
    /// column for an unnamed step, the recorded content for a named one).
    public func change(to node: PlanNode, recordedNode: PlanNode?, run: String) -> String? {
        if node.name != name || node.keyword != kind {
            // The step it was, not its path: output names steps, never positions (`1`, `2.3`).
            return "run \(run) recorded another step in its place: \(label) (\(kind))"
        }
        let what: String
        switch node.kind {
        case .shell: what = "its command is not the one run \(run) ran"
        case .print: what = "its message is not the one run \(run) printed"
        case .delay: what = "its duration is not the one run \(run) waited"
        default: return nil
        }
        if let recordedNode {
            return Self.body(of: node) == Self.body(of: recordedNode) ? nil : what
        }
        // No recorded plan to compare with: the label column is what the journal has.
        return node.summary == summary ? nil : what
    }

    /// What a leaf does, as written.
    private static func body(of node: PlanNode) -> String? {
        switch node.kind {
        case .shell(let task): return task.command.raw
        case .print(let message, let stream): return "\(stream) \(message.raw)"
        case .delay(let duration): return duration.compact
        default: return nil
        }
    }
}
