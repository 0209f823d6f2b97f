/// Checks a parsed workflow as a whole: names, actions, parameters and every expression.
///
/// Runs after the parser; adds its diagnostics to the same bag, so `flow validate` prints
/// all problems of a file in one pass.
public struct Validator {
    let workflow: Workflow
    var bag: DiagnosticBag

    /// What the validator knows about one named step of a scope.
    struct NamedStep {
        var name: Located<String>
        var path: StepPath
        var outputs: [Located<String>]?
    }

    /// The names visible to expressions in one scope (the workflow, or one action's body).
    struct Scope {
        var steps: [String: NamedStep] = [:]
        /// Set inside an action: its parameters.
        var action: Action?
        var usedParams: Set<String> = []
    }

    var scope = Scope()
    var usedVars: Set<String> = []

    public init(workflow: Workflow, bag: DiagnosticBag) {
        self.workflow = workflow
        self.bag = bag
    }

    /// Validates `workflow`, adding diagnostics to `bag`.
    public static func validate(_ workflow: Workflow, into bag: inout DiagnosticBag) {
        var validator = Validator(workflow: workflow, bag: bag)
        validator.run()
        bag = validator.bag
    }

    mutating func run() {
        checkRecursion()
        // The workflow's own scope: steps, finally, and their undo steps.
        scope = Scope()
        collectNames(workflow.steps, base: StepPath(components: []), list: .sequential)
        let rootFinallyBase = StepPath(components: [StepPath.Component(list: .finally, index: -1)])
        collectNames(workflow.finally, base: rootFinallyBase, list: .sequential)
        for env in workflow.env { checkTemplate(env.value, at: nil, finished: [], context: .text) }
        if let dir = workflow.defaults.dir { checkTemplate(dir, at: nil, finished: [], context: .text) }
        let finished = walk(workflow.steps, base: StepPath(components: []), list: .sequential, finished: [])
        _ = walk(workflow.finally, base: rootFinallyBase, list: .sequential, finished: finished)

        for action in workflow.actions {
            scope = Scope(action: action)
            collectNames(action.steps, base: StepPath(components: []), list: .sequential)
            _ = walk(action.steps, base: StepPath(components: []), list: .sequential, finished: [])
            for param in action.params where !scope.usedParams.contains(param.name.value) {
                bag.warning(.unusedParam, "parameter `\(param.name.value)` of action `\(action.name.value)` is never used",
                            at: param.name.span, help: "use it as `${{ params.\(param.name.value) }}`, or remove it")
            }
        }
        var seenVars: Set<String> = []
        for variable in workflow.vars {
            if !seenVars.insert(variable.name.value).inserted { continue }
            if !usedVars.contains(variable.name.value) {
                bag.warning(.unusedVar, "variable `\(variable.name.value)` is never used", at: variable.name.span,
                            help: "use it as `${{ vars.\(variable.name.value) }}`, or remove it")
            }
        }
    }

    // MARK: Names

    /// Records every named step of a list (recursively), reporting duplicates.
    mutating func collectNames(_ steps: [Step], base: StepPath, list: StepPath.List) {
        for (index, step) in steps.enumerated() {
            let path = base.appending(list, index)
            if let name = step.name {
                if let first = scope.steps[name.value] {
                    bag.error(.duplicateName, "duplicate step name `\(name.value)`", at: name.span,
                              help: "step names are unique in a \(scope.action == nil ? "workflow" : "action")",
                              notes: [.init("`\(name.value)` is first used here", at: first.name.span)])
                } else {
                    scope.steps[name.value] = NamedStep(name: name, path: path, outputs: step.outputs)
                }
            }
            switch step.kind {
            case .sequential(let group):
                collectNames(group.steps, base: path, list: .sequential)
                collectNames(group.finally, base: path, list: .finally)
            case .concurrent(let group):
                collectNames(group.steps, base: path, list: .concurrent)
                collectNames(group.finally, base: path, list: .finally)
            default: break
            }
            if let undo = step.undo { collectNames(undo, base: path, list: .undo) }
        }
    }

    /// Names of a step and everything inside it that runs with it (not its `undo`).
    static func names(in step: Step, into set: inout Set<String>) {
        if let name = step.name { set.insert(name.value) }
        for child in step.children { names(in: child, into: &set) }
        for child in step.finallySteps { names(in: child, into: &set) }
    }

    // MARK: Walk

    /// Checks a list of steps; returns the names certainly finished after the list.
    mutating func walk(_ steps: [Step], base: StepPath, list: StepPath.List, finished: Set<String>) -> Set<String> {
        var done = finished
        var afterAll = finished
        for (index, step) in steps.enumerated() {
            let path = base.appending(list, index)
            // In a concurrent group, siblings never count as finished for each other.
            let before = list == .concurrent ? finished : done
            check(step, path: path, finished: before)
            var inside = Set<String>()
            Self.names(in: step, into: &inside)
            if list == .concurrent { afterAll.formUnion(inside) } else { done.formUnion(inside) }
        }
        return list == .concurrent ? afterAll : done
    }

    mutating func check(_ step: Step, path: StepPath, finished: Set<String>) {
        let site = ReferenceSite(step: step, path: path)
        if let condition = step.condition {
            checkExpression(condition.value, at: site, finished: finished, context: .condition)
        }
        for env in step.env { checkTemplate(env.value, at: site, finished: finished, context: .text) }
        switch step.kind {
        case .print(let p):
            checkTemplate(p.message, at: site, finished: finished, context: .text)
        case .delay:
            break
        case .shell(let s):
            checkTemplate(s.command, at: site, finished: finished, context: .shell)
            if let dir = s.dir { checkTemplate(dir, at: site, finished: finished, context: .text) }
            if let stdin = s.stdin { checkTemplate(stdin, at: site, finished: finished, context: .text) }
            if let interactive = s.interactive, interactive.value, let stdin = s.stdin {
                bag.error(.conflictingOptions, "a step cannot be `interactive` and have `stdin`", at: stdin.span,
                          help: "an interactive step reads the terminal",
                          notes: [.init("`interactive` is set here", at: interactive.span)])
            }
        case .sequential(let group), .concurrent(let group):
            let isConcurrent: Bool
            if case .concurrent = step.kind { isConcurrent = true } else { isConcurrent = false }
            let afterChildren = walk(group.steps, base: path, list: isConcurrent ? .concurrent : .sequential, finished: finished)
            _ = walk(group.finally, base: path, list: .finally, finished: afterChildren)
        case .use(let use):
            for (_, value) in use.with { checkTemplate(value, at: site, finished: finished, context: .text) }
            checkUse(use, at: step)
        }
        if let undo = step.undo {
            var afterStep = finished
            Self.names(in: step, into: &afterStep)
            _ = walk(undo, base: path, list: .undo, finished: afterStep)
        }
    }
}
