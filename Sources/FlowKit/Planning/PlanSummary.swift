/// The last line of a plan: how many steps, and the least wall time the run can take.
public struct PlanSummary: Sendable {
    public var total = 0
    public var selected = 0
    public var shortestWallTime: Duration = .zero

    public init(plan: Plan) {
        var total = 0, selected = 0
        func count(_ list: [PlanNode]) {
            for child in list {
                total += 1
                if child.selected { selected += 1 }
                count(child.children)
                count(child.finally)
            }
        }
        count(plan.root.children)
        count(plan.root.finally)
        self.total = total
        self.selected = selected
        // The least a run can take (see `WallTimeBound`), with the values known now.
        var vars: [String: String] = [:]
        for (name, value) in plan.vars { vars[name] = value }
        let context = StaticContext(vars: vars, workflowName: plan.workflowName)
        shortestWallTime = WallTimeBound.of(plan.root, in: context).least
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
