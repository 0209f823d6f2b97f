import Synchronization

/// What the steps of a run share: results by name, the completion order for rollback,
/// and counts for the summary.
final class RunState: Sendable {
    private struct State {
        var results: [String: StepResult] = [:]
        var completed: [StepInstance] = []
        var counts: [StepState: Int] = [:]
        var status = RunStatus.running
    }

    private let state = Mutex(State())

    private static func key(_ scope: Int, _ name: String) -> String { "\(scope)/\(name)" }

    /// Makes a result from an earlier run visible to expressions (resume, undo).
    func seed(_ node: PlanNode, _ result: StepResult) {
        guard let name = node.name else { return }
        state.withLock { $0.results[Self.key(node.scope, name)] = result }
    }

    func record(_ instance: StepInstance, _ result: StepResult) {
        state.withLock { s in
            if let name = instance.node.name { s.results[Self.key(instance.node.scope, name)] = result }
            if instance.ref.isLeaf { s.counts[result.state, default: 0] += 1 }
            if result.state == .succeeded, !instance.node.undo.isEmpty { s.completed.append(instance) }
        }
    }

    /// Counts a step that never ran (deselected, or its group was skipped).
    func countSkipped(_ node: PlanNode) {
        state.withLock { s in
            func visit(_ n: PlanNode) {
                if !n.isGroup { s.counts[.skipped, default: 0] += 1 }
                for child in n.children + n.finally { visit(child) }
            }
            visit(node)
        }
    }

    func recount(_ from: StepState, _ to: StepState) {
        state.withLock { s in
            s.counts[from, default: 0] -= 1
            s.counts[to, default: 0] += 1
        }
    }

    func result(_ frame: ScopeFrame, _ name: String) -> StepResult? {
        state.withLock { $0.results[Self.key(frame.id, name)] }
    }

    /// Steps with `undo` that succeeded, latest first.
    var rollbackOrder: [StepInstance] { state.withLock { $0.completed.reversed() } }

    var counts: [StepState: Int] { state.withLock { $0.counts } }

    var status: RunStatus {
        get { state.withLock { $0.status } }
        set { state.withLock { $0.status = newValue } }
    }
}
