/// The resolved execution tree of a workflow (or of one action), ready to print or run.
public struct Plan: Sendable {
    public var workflowName: String
    public var file: SourceFile
    /// The root: a sequential group holding the steps, with the root `finally`.
    public var root: PlanNode
    /// Variables after `--var` overrides, in declaration order.
    public var vars: [(name: String, value: String)]
    /// Set when the plan runs one action (`flow run FILE ACTION`).
    public var action: String?
    /// Whether rollback runs on failure (the workflow's `rollback`).
    public var rollback: Bool
    /// The shell of the workflow's shell steps where no group sets another: `defaults.shell`,
    /// else the top-level `shell`, else `sh`. `flow plan` shows it once, in its header.
    public var shell: ShellProgram = .sh

    /// What the plan is called in its printed tree and graphs: the workflow's name, and
    /// the action when the plan runs one (`release · action deploy`).
    public var title: String {
        action.map { "\(workflowName) · action \($0)" } ?? workflowName
    }

    /// Every node except the root, in pre-order (children, then finally; undo excluded).
    public var steps: [PlanNode] {
        var out: [PlanNode] = []
        func visit(_ node: PlanNode) {
            for child in node.children { out.append(child); visit(child) }
            for child in node.finally { out.append(child); visit(child) }
        }
        visit(root)
        return out
    }

    /// Whether no step would run: `--only`, `--tags` and `--skip-tags` together left none
    /// selected (each names something that is there, or planning would have refused).
    public var selectsNoStep: Bool {
        !steps.contains { $0.selected && $0.children.isEmpty && $0.finally.isEmpty }
    }

    /// The variable `name`, if declared.
    public func variable(_ name: String) -> String? {
        vars.first { $0.name == name }?.value
    }
}
