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
        shortestWallTime = Self.wallTime(plan.root)
    }

    /// Delay on the critical path, assuming every selected step runs once and shell steps
    /// take no time. Concurrent groups with `max_parallel` are scheduled in file order, as
    /// the executor starts them. Sums saturate at `Duration.maximum`: each delay is at most
    /// that, but many of them need not be.
    static func wallTime(_ node: PlanNode) -> Duration {
        guard node.selected else { return .zero }
        let own: Duration
        switch node.kind {
        case .delay(let d): own = d
        case .print, .shell: own = .zero
        case .sequential, .use:
            own = node.children.reduce(.zero) { $0.saturatingAdd(wallTime($1)) }
        case .concurrent(let maxParallel, _):
            let times = node.children.filter(\.selected).map(wallTime)
            if let limit = maxParallel, limit < times.count {
                var slots = [Duration](repeating: .zero, count: limit)
                for t in times {
                    let i = slots.indices.min { slots[$0] < slots[$1] }!
                    slots[i] = slots[i].saturatingAdd(t)
                }
                own = slots.max() ?? .zero
            } else {
                own = times.max() ?? .zero
            }
        }
        return node.finally.reduce(own) { $0.saturatingAdd(wallTime($1)) }
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
