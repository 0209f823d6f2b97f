/// Checks of `use:` sites: the action exists, its parameters fit, and no action uses itself.
extension Validator {
    mutating func checkUse(_ use: UseStep, at step: Step) {
        guard let action = actionTable.action(named: use.action.value) else {
            // `use: ""` named no action: "unknown action ``" and a "did you mean" of the
            // nearest short name read as if a name had been mistyped.
            if use.action.value.allSatisfy(\.isWhitespace) {
                bag.error(.unknownAction, "`use` names no action", at: use.action.span,
                          help: workflow.actions.isEmpty ? "declare one under `actions:` and name it here"
                            : "name one of " + Suggestion.list(workflow.actions.map(\.name.value)))
                return
            }
            // An action whose definition could not be read has its error already.
            if workflow.unreadActionNames.contains(use.action.value) { return }
            bag.error(.unknownAction, "unknown action `\(use.action.value)`", at: use.action.span,
                      help: actionHelp(for: use.action.value)
                        ?? (workflow.actions.isEmpty ? "declare it under `actions:`" : "the actions are "
                            + Suggestion.list(workflow.actions.map(\.name.value))))
            return
        }
        var given: Set<String> = []
        // A parameter whose value had the wrong type (reported already) is given all the
        // same: "needs the parameter" would be false.
        let values: [(name: Located<String>, value: Template?)] = use.with.map { ($0.name, $0.value) } + use.withoutValue.map { ($0, nil) }
        for (name, value) in values {
            given.insert(name.value)
            guard let param = actionTable.param(named: name.value, of: action.name.value) else {
                if action.paramsUnread { continue }
                bag.error(.unknownParam, "action `\(action.name.value)` has no parameter `\(name.value)`", at: name.span,
                          help: Suggestion.help(for: name.value, in: action.params.map(\.name.value))
                            ?? (action.params.isEmpty ? "it takes no parameters" : "its parameters are "
                                + Suggestion.list(action.params.map(\.name.value))))
                continue
            }
            if let allowed = param.allowed, let value { checkAllowed(value, of: name.value, allowed: allowed) }
        }
        for param in action.params where param.required && !given.contains(param.name.value) {
            bag.error(.missingParam, "action `\(action.name.value)` needs the parameter `\(param.name.value)`",
                      at: use.action.span, help: "add `with: {\(param.name.value): …}`",
                      notes: [.init("`\(param.name.value)` is declared here", at: param.name.span)])
        }
    }

    /// Reports a `with` value outside `allowed` when it is known before a run: a literal,
    /// or a value built only from default `vars` (and `workflow.name`). The default vars
    /// may be overridden with `--var`, so `flow plan` and `flow run` check again with the
    /// real ones; values from outputs, params or env are checked when the step starts.
    mutating func checkAllowed(_ value: Template, of param: String, allowed: [Located<String>]) {
        // A value whose expression does not parse has no value yet: its syntax error says so.
        guard !value.hasSyntaxErrors, let resolved = statics.text(of: value), !allowed.contains(where: { $0.value.isIdentical(to: resolved) }) else { return }
        let help = Param.allowedHelp(for: resolved, allowed: allowed.map(\.value), quoted: true)
        if value.isLiteral {
            bag.error(.disallowedParam, "\(Param.shown(resolved)) is not an allowed value of `\(param)`", at: value.span, help: help)
            return
        }
        // Point at each default that made the value, so the fix (or the `--var` that
        // would override it) is plain.
        var notes: [Diagnostic.Note] = []
        var seen: Set<String> = []
        for path in value.expressions.flatMap(\.references) where path.count == 2 && path[0].value == "vars" {
            guard seen.insert(path[1].value).inserted,
                  let variable = workflow.vars.last(where: { $0.name.value == path[1].value }) else { continue }
            let shown = variable.value.value.isEmpty ? "empty" : "`\(variable.value.value)`"
            notes.append(.init("`vars.\(path[1].value)` is \(shown) by default (`--var` may change it)", at: variable.value.span))
        }
        bag.error(.disallowedParam, "\(Param.shown(resolved)) (from `\(value.raw)`) is not an allowed value of `\(param)`",
                  at: value.span, help: help, notes: notes)
    }

    /// Most steps a workflow may expand to once actions are inlined: a few `use` steps of
    /// actions that use each other can otherwise ask for billions (an "expansion bomb").
    static let maxExpandedSteps = 1_000_000

    /// Reports the `use` step at which the expanded workflow grows past the limit.
    mutating func checkExpansion(_ graph: CallGraph, index: [String: Int]) {
        // Each action's size, computed once, in the call graph's component order: an action
        // comes after every action it uses, so no recursion through a chain of actions (one
        // of 20,000 overflowed the stack). A use within a cycle counts 0: it is reported
        // as recursion.
        var sizes: [String: Int] = [:]
        func size(ofAction name: String) -> Int { sizes[name] ?? 0 }
        func size(of steps: [Step]) -> Int {
            var total = 0
            for step in steps {
                total = min(total &+ 1, Int.max / 4)
                if case .use(let use) = step.kind { total = min(total &+ size(ofAction: use.action.value), Int.max / 4) }
                total = min(total &+ size(of: step.children) &+ size(of: step.finallySteps) &+ size(of: step.undo ?? []), Int.max / 4)
            }
            return total
        }
        let actions = workflow.actions
        for i in actions.indices.sorted(by: { graph.component[$0] < graph.component[$1] })
        where index[actions[i].name.value] == i {
            sizes[actions[i].name.value] = size(of: actions[i].steps)
        }
        var running = 0
        var reported = false
        func walk(_ steps: [Step]) {
            for step in steps where !reported {
                running += 1
                // One look at the kind per step (it is a large enum: each `children` or
                // `finallySteps` copies it), on the 100,000-step validate path.
                switch step.kind {
                case .use(let use):
                    let added = size(ofAction: use.action.value)
                    running = min(running &+ added, Int.max / 4)
                    if running > Self.maxExpandedSteps {
                        reported = true
                        bag.error(.expansionLimit, "the workflow expands to more than \(Self.maxExpandedSteps) steps here "
                                  + "(`\(use.action.value)` alone is \(added) steps once its actions are inlined)",
                                  at: use.action.span, help: "actions that use each other several times multiply; use fewer or flatter actions")
                        return
                    }
                case .sequential(let group), .concurrent(let group):
                    walk(group.steps)
                    walk(group.finally)
                default: break
                }
                if let undo = step.undo { walk(undo) }
            }
        }
        walk(workflow.steps)
        walk(workflow.finally)
    }

    /// Reports every `use` inside an action that leads back to that action.
    mutating func checkRecursion(_ graph: CallGraph, index: [String: Int]) {
        let actions = workflow.actions
        var calls: [String: [Located<String>]]?
        var reportedCycles: Set<Int> = []
        for (i, action) in actions.enumerated() where index[action.name.value] == i {
            for (site, target) in graph.sites[i] where graph.isRecursive(from: i, to: target) {
                let cycle = graph.component[i]
                if graph.componentSize[cycle] > Self.cycleReportLimit {
                    // A cycle of thousands of actions: one error, not one per site with the
                    // whole chain each (quadratic output).
                    guard reportedCycles.insert(cycle).inserted else { continue }
                    let members = actions.indices.filter { graph.component[$0] == cycle }.map { actions[$0].name.value }
                    bag.error(.actionRecursion, "action `\(action.name.value)` uses itself, through a cycle of "
                              + "\(members.count) actions: " + Suggestion.list(members, limit: 8), at: site.span,
                              help: "actions cannot call themselves, directly or through others")
                    continue
                }
                if calls == nil {
                    var all: [String: [Located<String>]] = [:]
                    for (k, other) in actions.enumerated() where index[other.name.value] == k {
                        all[other.name.value] = graph.sites[k].map(\.site)
                    }
                    calls = all
                }
                let chainNames = Self.path(from: site.value, to: action.name.value, calls: calls!) ?? [site.value]
                let chain = ([action.name.value] + chainNames).map { "`\($0)`" }.joined(separator: " → ")
                bag.error(.actionRecursion, "action `\(action.name.value)` uses itself: \(chain)", at: site.span,
                          help: "actions cannot call themselves, directly or through others")
            }
        }
    }

    /// Reports the `use` sites where a chain of actions grows deeper than planning allows
    /// (`Planner.maxUseDepth`): the site whose action would be the first level too many.
    mutating func checkUseDepth(_ graph: CallGraph, index: [String: Int]) {
        let depths = graph.useDepths()
        let limit = Planner.maxUseDepth
        for (i, action) in workflow.actions.enumerated() where index[action.name.value] == i {
            for (site, target) in graph.sites[i] where !graph.isRecursive(from: i, to: target) && depths[target] == limit {
                bag.error(.expansionLimit, "`use` steps nest more than \(limit) levels deep: running `\(action.name.value)` "
                          + "uses `\(site.value)`, whose own `use` steps go \(limit) levels down", at: site.span,
                          help: "flatten the chain of actions (at most \(limit) `use` levels)")
            }
        }
    }

    /// Cycles of more actions are reported once, not at each of their sites.
    static let cycleReportLimit = 64

    static func useSites(_ steps: [Step], into sites: inout [Located<String>]) {
        for step in steps {
            if case .use(let use) = step.kind { sites.append(use.action) }
            useSites(step.children, into: &sites)
            useSites(step.finallySteps, into: &sites)
            if let undo = step.undo { useSites(undo, into: &sites) }
        }
    }

    /// The chain of action names from `start` to `goal`, if `start` can reach it.
    static func path(from start: String, to goal: String, calls: [String: [Located<String>]]) -> [String]? {
        var previous: [String: String] = [:]
        var queue = [start]
        var seen: Set<String> = [start]
        var head = 0
        while head < queue.count {
            let current = queue[head]
            head += 1
            if current == goal {
                var chain = [current]
                var node = current
                while let p = previous[node] { chain.append(p); node = p }
                return chain.reversed()
            }
            for next in calls[current] ?? [] where seen.insert(next.value).inserted {
                previous[next.value] = current
                queue.append(next.value)
            }
        }
        return nil
    }
}
