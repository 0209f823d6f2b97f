/// Checks of `use:` sites: the action exists, its parameters fit, and no action uses itself.
extension Validator {
    mutating func checkUse(_ use: UseStep, at step: Step) {
        guard let action = workflow.action(named: use.action.value) else {
            bag.error(.unknownAction, "unknown action `\(use.action.value)`", at: use.action.span,
                      help: actionHelp(for: use.action.value)
                        ?? (workflow.actions.isEmpty ? "declare it under `actions:`" : "the actions are "
                            + Suggestion.list(workflow.actions.map(\.name.value))))
            return
        }
        var given: Set<String> = []
        for (name, value) in use.with {
            given.insert(name.value)
            guard let param = action.param(named: name.value) else {
                bag.error(.unknownParam, "action `\(action.name.value)` has no parameter `\(name.value)`", at: name.span,
                          help: Suggestion.help(for: name.value, in: action.params.map(\.name.value))
                            ?? (action.params.isEmpty ? "it takes no parameters" : "its parameters are "
                                + Suggestion.list(action.params.map(\.name.value))))
                continue
            }
            if let allowed = param.allowed, value.isLiteral, !allowed.contains(where: { $0.value == value.raw }) {
                bag.error(.disallowedParam, "`\(value.raw)` is not an allowed value of `\(name.value)`", at: value.span,
                          help: "allowed: " + allowed.map { "`\($0.value)`" }.joined(separator: ", "))
            }
        }
        for param in action.params where param.required && !given.contains(param.name.value) {
            bag.error(.missingParam, "action `\(action.name.value)` needs the parameter `\(param.name.value)`",
                      at: use.action.span, help: "add `with: {\(param.name.value): …}`",
                      notes: [.init("`\(param.name.value)` is declared here", at: param.name.span)])
        }
    }

    /// Most steps a workflow may expand to once actions are inlined: a few `use` steps of
    /// actions that use each other can otherwise ask for billions (an "expansion bomb").
    static let maxExpandedSteps = 1_000_000

    /// Reports the `use` step at which the expanded workflow grows past the limit.
    mutating func checkExpansion() {
        var sizes: [String: Int] = [:]
        var visiting: Set<String> = []
        func size(ofAction name: String) -> Int {
            if let known = sizes[name] { return known }
            guard let action = workflow.action(named: name), visiting.insert(name).inserted else { return 0 }
            let total = size(of: action.steps)
            visiting.remove(name)
            sizes[name] = total
            return total
        }
        func size(of steps: [Step]) -> Int {
            var total = 0
            for step in steps {
                total = min(total &+ 1, Int.max / 4)
                if case .use(let use) = step.kind { total = min(total &+ size(ofAction: use.action.value), Int.max / 4) }
                total = min(total &+ size(of: step.children) &+ size(of: step.finallySteps) &+ size(of: step.undo ?? []), Int.max / 4)
            }
            return total
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
    mutating func checkRecursion() {
        var calls: [String: [Located<String>]] = [:]
        for action in workflow.actions {
            var sites: [Located<String>] = []
            Self.useSites(action.steps, into: &sites)
            calls[action.name.value] = sites
        }
        for action in workflow.actions {
            for site in calls[action.name.value] ?? [] {
                if let cycle = Self.path(from: site.value, to: action.name.value, calls: calls) {
                    let chain = ([action.name.value] + cycle).map { "`\($0)`" }.joined(separator: " → ")
                    bag.error(.actionRecursion, "action `\(action.name.value)` uses itself: \(chain)", at: site.span,
                              help: "actions cannot call themselves, directly or through others")
                }
            }
        }
    }

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
