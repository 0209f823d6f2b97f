/// The last line of a plan: how many steps, and the least wall time the run can take.
public struct PlanSummary: Sendable {
    public var total = 0
    public var selected = 0
    public var shortestWallTime: Duration = .zero

    public init(plan: Plan) {
        Self.count(plan.root.children, total: &total, selected: &selected)
        Self.count(plan.root.finally, total: &total, selected: &selected)
        // The least a run can take (see `WallTimeBound`), with the values known now.
        var vars: [String: String] = [:]
        for (name, value) in plan.vars { vars[name] = value }
        let context = StaticContext(vars: vars, workflowName: plan.workflowName)
        shortestWallTime = WallTimeBound.of(plan.root, in: context).least
    }

    /// Counts the steps of `list` and of the groups in it (not undo steps: the plan's
    /// steps are those a run goes through). A static function, not a nested one: that one
    /// captured the counters in boxes on the heap, a few hundred instructions a step.
    static func count(_ list: [PlanNode], total: inout Int, selected: inout Int) {
        for child in list {
            total += 1
            if child.selected { selected += 1 }
            if !child.children.isEmpty { count(child.children, total: &total, selected: &selected) }
            if !child.finally.isEmpty { count(child.finally, total: &total, selected: &selected) }
        }
    }

    /// Whether the sum reached `Duration.maximum` and stopped there (or is exactly the
    /// maximum): the real wall time is at least that.
    public var isSaturated: Bool { shortestWallTime >= .maximum }

    public var text: String {
        var out = "\(total) step\(total == 1 ? "" : "s")"
        if selected != total { out += " (\(selected) selected)" }
        out += ", shortest wall time \(shortestWallTime.compact)"
        if isSaturated { out += " or more" }
        return out
    }
}
