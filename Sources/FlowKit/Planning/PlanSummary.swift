/// The last line of a plan: how many steps, and the shortest wall time their delays imply.
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
        shortestWallTime = .seconds(Self.wallTime(plan.root))
    }

    /// Seconds of delay on the critical path, assuming every selected step runs once and
    /// shell steps take no time. Concurrent groups with `max_parallel` are scheduled in
    /// file order, as the executor starts them.
    static func wallTime(_ node: PlanNode) -> Double {
        guard node.selected else { return 0 }
        let own: Double
        switch node.kind {
        case .delay(let d): own = d.seconds
        case .print, .shell: own = 0
        case .sequential, .use:
            own = node.children.reduce(0) { $0 + wallTime($1) }
        case .concurrent(let maxParallel, _):
            let times = node.children.filter(\.selected).map(wallTime)
            if let limit = maxParallel, limit < times.count {
                var slots = [Double](repeating: 0, count: limit)
                for t in times {
                    let i = slots.indices.min { slots[$0] < slots[$1] }!
                    slots[i] += t
                }
                own = slots.max() ?? 0
            } else {
                own = times.max() ?? 0
            }
        }
        return own + node.finally.reduce(0) { $0 + wallTime($1) }
    }

    public var text: String {
        var out = "\(total) step\(total == 1 ? "" : "s")"
        if selected != total { out += " (\(selected) selected)" }
        out += ", shortest wall time \(shortestWallTime.compact)"
        return out
    }
}
