/// What the start of an unnamed `shell` or `use` step says beside its label in `prefixed`
/// and `grouped` output (`▶ shell@2: make test`, `── ✓ use@1: build (0.4s) ──`), by path.
///
/// A label such as `shell@2` says where a step is, not what it runs, and a Makefile or
/// Taskfile ported to flow is mostly unnamed steps (`- make test`): make echoes each
/// command it runs, go-task prints `task: [test] make test` and GitHub Actions titles an
/// unnamed step `Run make test`, so a log of bare `shell@2` lines said less than theirs.
/// A named step has none: its name is what the workflow's author chose to show.
public enum StepDetails {
    /// The longest detail, in terminal columns: past it the command is cut with `…`, so a
    /// one-line script of a few kilobytes does not fill the log at every start.
    static let maximumColumns = 100

    /// The details of `plan`'s unnamed shell and `use` steps (undo steps too, which a
    /// rollback or `flow undo` runs), keyed by path; steps not selected have none.
    public static func of(_ plan: Plan) -> [String: String] {
        var details: [String: String] = [:]
        func visit(_ nodes: [PlanNode]) {
            for node in nodes where node.selected {
                if let detail = detail(of: node) { details[node.path] = detail }
                visit(node.children)
                visit(node.finally)
                visit(node.undo)
            }
        }
        visit(plan.root.children)
        visit(plan.root.finally)
        return details
    }

    /// The command's first line (`…` after it when there are more), or the action's name;
    /// nil for a named step and for other kinds (a `print`'s message is its next line, a
    /// `delay`'s length its end line's time). Control characters are escaped, as in labels.
    static func detail(of node: PlanNode) -> String? {
        guard node.name == nil else { return nil }
        let text: String
        switch node.kind {
        case .shell(let task): text = PlanPrinter.oneLine(task.command.raw)
        case .use(let action, _): text = action
        default: return nil
        }
        let escaped = ControlEscaping.escaped(text)
        return escaped.isEmpty ? nil : DisplayWidth.fit(escaped, in: maximumColumns).text
    }

    /// The nearest named step around each step of `plan` that has one, by path: `beta` for
    /// `test@1.2.2`, a step of action `check` used as `beta`. A GitHub annotation says it
    /// beside such a label (`flow step test@1.2.2 (in beta) failed`): the label says where
    /// the step is by numbers, which a reader of the job's summary cannot map to the
    /// package that failed.
    public static func places(of plan: Plan) -> [String: String] {
        var places: [String: String] = [:]
        func visit(_ nodes: [PlanNode], around: String?) {
            for node in nodes {
                if let around { places[node.path] = around }
                let inner = node.name ?? around
                visit(node.children, around: inner)
                visit(node.finally, around: inner)
                visit(node.undo, around: inner)
            }
        }
        visit(plan.root.children, around: nil)
        visit(plan.root.finally, around: nil)
        return places
    }
}
