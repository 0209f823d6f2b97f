/// What the command line can name in a workflow: the steps `--only` selects, the tags
/// `--tags` and `--skip-tags` match, and the actions. One source for the planner's checks
/// and help and for shell completion, so that what completes is what is accepted.
public enum SelectionNames {
    /// The steps `--only` looks in: the workflow's steps and `finally` steps, or ACTION's
    /// steps when one is run (an unknown ACTION is reported on its own: until then, the
    /// workflow's).
    public static func onlyScope(_ workflow: Workflow, action: String?) -> [Step] {
        action.flatMap { name in workflow.actions.first { $0.name.value == name }?.steps } ?? (workflow.steps + workflow.finally)
    }

    /// The names `--only` can select, in file order, each once: named steps of
    /// `onlyScope` and of their groups (not `undo` steps, nor the steps of used actions).
    public static func onlyNames(_ workflow: Workflow, action: String?) -> [String] {
        var names: [String] = []
        collectNames(onlyScope(workflow, action: action), into: &names)
        var seen: Set<String> = []
        return names.filter { seen.insert($0).inserted }
    }

    /// The tags of the steps a run of the workflow (or of ACTION) holds, in file order, each
    /// once: groups, `finally` and `undo` steps, and the steps of the actions `use` steps run.
    public static func tags(_ workflow: Workflow, action: String?) -> [String] {
        var tags: [String] = []
        var seen: Set<String> = []
        var entered: Set<String> = []
        func walk(_ steps: [Step]) {
            for step in steps {
                for tag in step.tags where seen.insert(tag.value).inserted { tags.append(tag.value) }
                walk(step.children)
                walk(step.finallySteps)
                walk(step.undo ?? [])
                // An action's steps once, however many steps use it (and if it uses itself).
                if case .use(let use) = step.kind, entered.insert(use.action.value).inserted,
                   let action = workflow.actions.first(where: { $0.name.value == use.action.value }) {
                    walk(action.steps)
                }
            }
        }
        walk(onlyScope(workflow, action: action))
        return tags
    }

    static func collectNames(_ steps: [Step], into names: inout [String]) {
        for step in steps {
            if let name = step.name { names.append(name.value) }
            collectNames(step.children, into: &names)
            collectNames(step.finallySteps, into: &names)
        }
    }
}
