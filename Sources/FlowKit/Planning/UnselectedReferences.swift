/// Finds the `steps.X…` references of selected steps to steps the selection leaves out
/// (`--only`, `--tags`, `--skip-tags`): X does not run, so the value is what a skipped
/// step gives (empty outputs, a `null` exit code, `skipped`), which the reader rarely
/// means. Each becomes an `unselected-reference` warning at the reference.
public enum UnselectedReferences {
    /// The warnings for `plan`, in source order, one per reference (a group's `env` entry
    /// is checked once, on the group, not again on each step it is passed down to).
    public static func diagnostics(in plan: Plan) -> [Diagnostic] {
        // Only the steps left out can be read wrongly: without a selection (the usual run)
        // there are none, and nothing more is looked at (100,000 steps: ~55 ms saved).
        var byName: [Int: [String: PlanNode]] = [:]
        func index(_ node: PlanNode) {
            if let name = node.name, !node.selected { byName[node.scope, default: [:]][name] = node }
            for child in node.children { index(child) }
            for child in node.finally { index(child) }
            for child in node.undo { index(child) }
        }
        index(plan.root)
        guard !byName.isEmpty else { return [] }

        var found: [Diagnostic] = []
        var seen: Set<SourceSpan> = []
        func check(_ expression: Expression, in node: PlanNode) {
            for path in expression.references where path.count >= 3 && path[0].value == "steps" {
                let name = path[1].value
                guard let target = byName[node.scope]?[name] else { continue }
                let span = SourceSpan(start: path[0].span.start, end: path[path.count - 1].span.end)
                guard seen.insert(span).inserted else { continue }
                let text = path.map(\.value).joined(separator: ".")
                let value: String
                switch path[2].value {
                case "status": value = "will be `skipped`"
                case "exit_code": value = "will be `null`"
                default: value = "will be empty"
                }
                found.append(Diagnostic(
                    .warning, .unselectedReference, "`\(text)` \(value): step `\(name)` is not selected, so it does not run",
                    file: plan.file, span: span,
                    help: "to have it, select `\(name)` as well (`--only` takes one step: tag both and use `--tags`)",
                    notes: [.init("`\(name)` is here", at: target.nameSpan ?? target.span)]))
            }
        }
        func visit(_ node: PlanNode, inherited: Set<SourceSpan>) {
            if node.selected {
                if let condition = node.condition { check(condition, in: node) }
                var templates: [Template] = []
                switch node.kind {
                case .print(let message, _): templates.append(message)
                case .shell(let task): templates += [task.command] + [task.dir, task.stdin].compactMap { $0 }
                case .use(_, let with): templates += with.map(\.value)
                default: break
                }
                // Inherited entries were checked on the group that declares them (whose
                // scope the reference is in: a `use` step's `env` reaches its action's steps).
                templates += node.env.filter { !inherited.contains($0.name.span) }.map(\.value)
                for template in templates {
                    for expression in template.expressions { check(expression, in: node) }
                }
            }
            let passed = inherited.union(node.env.map(\.name.span))
            for child in node.children + node.finally + node.undo { visit(child, inherited: passed) }
        }
        visit(plan.root, inherited: [])
        return found.sorted { $0.span.start < $1.span.start }
    }
}
