/// Reference checks for expressions: every reference resolves, and `steps.X` only where X
/// has certainly finished.
extension Validator {
    /// Where an expression is written, which decides what it may contain.
    enum ExpressionContext {
        /// An `if` condition: status functions allowed.
        case condition
        /// A shell command: substituted through environment variables, so not in single quotes.
        case shell
        /// Any other string.
        case text
    }

    static let roots = ["vars", "env", "params", "steps", "workflow", "run"]
    /// GitHub Actions' roots that mean one of flow's: an action's `inputs` are its
    /// `params`, secrets reach flow through the environment, and what a job `needs` is an
    /// earlier step.
    static let foreignRoots = ["inputs": "params", "secrets": "env", "needs": "steps"]
    /// GitHub Actions' fields of a step (`outcome`, `conclusion`) or of a needed job
    /// (`result`) that are flow's `status`: not near it by spelling, so no "did you mean".
    static let foreignStepFields = ["outcome", "conclusion", "result"]
    /// The literals spelt as names (lowercase only).
    static let literals = ["true", "false", "null"]

    mutating func checkTemplate(_ template: Template, at site: ReferenceSite?, context: ExpressionContext) {
        for placeholder in template.placeholders { checkForeignPlaceholder(placeholder) }
        guard !template.isLiteral else { return }
        if context == .shell { checkShellQuoting(template) }
        for expression in template.expressions {
            checkExpression(expression, at: site, context: context)
        }
    }

    mutating func checkExpression(_ expression: Expression, at site: ReferenceSite?, context: ExpressionContext) {
        if context != .condition {
            for call in expression.calls {
                bag.error(.misplacedFunction, "`\(call.value)()` is only meaningful in an `if` condition", at: call.span,
                          help: "use `run.status` or `steps.<name>.status` in text")
            }
        }
        for path in expression.references {
            checkReference(path, at: site)
        }
        checkStatusComparisons(expression)
        if context == .condition { checkStringFlags(expression) }
    }

    /// `if: vars.deploy` where `deploy: false`: a variable's (or a parameter's) value is a
    /// string, and every string but the empty one is true, `'false'` included, so the step
    /// runs whatever the flag says. Ansible's `when: deploy` reads the same YAML as a
    /// boolean, so its users (and anyone who wrote `false` as one) expect a skip. Flagged
    /// where the value is taken for its truth (the whole condition, under `!`, `&&` or `||`)
    /// and the file gives it as a boolean (`isFlag`).
    mutating func checkStringFlags(_ expression: Expression) {
        switch expression {
        case .reference(let path, let span):
            guard path.count == 2, isFlag(path[0].value, path[1].value) else { return }
            let text = path.map(\.value).joined(separator: ".")
            bag.warning(.stringFlag,
                        "`\(text)` is a string, and a condition takes every string but the empty one as true, `'false'` too",
                        at: span, help: "compare it with a boolean: `\(text) == true`")
        case .not(let inner, _):
            checkStringFlags(inner)
        case .binary(let op, let left, let right, _) where op == .and || op == .or:
            checkStringFlags(left)
            checkStringFlags(right)
        default:
            break
        }
    }

    /// Whether `root.name` is a variable, or a parameter of the enclosing action, whose
    /// value the file gives as a boolean (`true`, `False`…): its default, or for a
    /// parameter every `allowed` value.
    func isFlag(_ root: String, _ name: String) -> Bool {
        let isBoolean = { (value: String) in ["true", "false", "True", "False", "TRUE", "FALSE"].contains(value) }
        switch root {
        case "vars":
            return workflow.vars.last(where: { $0.name.value == name }).map { isBoolean($0.value.value) } ?? false
        case "params":
            guard let param = scope.action?.param(named: name) else { return false }
            if let value = param.defaultValue?.value, isBoolean(value) { return true }
            guard let allowed = param.allowed, !allowed.isEmpty else { return false }
            return allowed.allSatisfy { isBoolean($0.value) }
        default:
            return false
        }
    }

    /// `steps.a.status == 'sucess'`: a status compared with a string no status is, so the
    /// comparison is always false (`!=`: always true) and the step it guards never (or
    /// always) runs, without a word. A warning with the statuses (and a "did you mean").
    mutating func checkStatusComparisons(_ expression: Expression) {
        expression.visit { node in
            guard case .binary(let op, let left, let right, _) = node, op == .equal || op == .notEqual else { return }
            for (side, other) in [(left, right), (right, left)] {
                guard case .reference(let path, _) = side, case .literal(.string(let text), let span) = other,
                      let statuses = Self.statuses(of: path.map(\.value)), !statuses.contains(text) else { continue }
                // A step that is not there has its error already; a warning would add nothing.
                if path[0].value == "steps", scope.steps[path[1].value] == nil { continue }
                // Listed: the statuses a reference sees (a step that has ended, the run as it
                // goes); the others are accepted but would only lengthen the help.
                let listed = path[0].value == "steps" ? statuses.filter { !Self.passingStates.contains($0) } : statuses
                let what = path.map(\.value).joined(separator: ".")
                // An outcome word's status only where the reference can have it: `run.status`
                // is never `timed_out`, so `'timeout'` there gets the list, not that.
                let near = Suggestion.closest(to: text, in: statuses)
                    ?? Suggestion.closest(to: text, in: Self.outcomeWords.keys.sorted()).flatMap { Self.outcomeWords[$0] }
                        .flatMap { statuses.contains($0) ? $0 : nil }
                bag.warning(.unknownStatus, "`\(text)` is not a status `\(what)` can have, so this comparison is always \(op == .equal ? "false" : "true")",
                            at: span, help: near.map { "did you mean `\($0)`?" }
                                ?? "the statuses are " + Suggestion.list(listed, limit: listed.count))
            }
        }
    }

    /// GitHub Actions' words for a step's outcome (`steps.x.outcome == 'success'`), which
    /// its users write out of habit, and flow's status for each.
    static let outcomeWords = ["success": "succeeded", "failure": "failed", "timeout": "timed_out"]

    /// A step's states while it runs, or is undone: a `steps.X` reference is only ever to a
    /// step that has ended, so it does not see them (they are still no typo).
    static let passingStates: Set<String> = ["pending", "running", "retrying", "undoing"]

    /// The values a status reference can have: a step's states, or the run's statuses.
    static func statuses(of path: [String]) -> [String]? {
        if path.count == 3, path[0] == "steps", path[2] == "status" { return StepState.allCases.map(\.rawValue) }
        if path == ["run", "status"] { return RunStatus.allCases.map(\.rawValue) }
        return nil
    }

    mutating func checkReference(_ path: [Located<String>], at site: ReferenceSite?) {
        let whole = SourceSpan(start: path[0].span.start, end: path[path.count - 1].span.end)
        let text = path.map(\.value).joined(separator: ".")
        func field(_ index: Int, _ what: String) -> Located<String>? {
            guard index < path.count else {
                bag.error(.unknownReference, "`\(text)` is incomplete", at: whole, help: "write `\(text).\(what)`")
                return nil
            }
            return path[index]
        }
        func noMore(_ count: Int) {
            if path.count > count {
                bag.error(.unknownReference, "`\(path[..<count].map(\.value).joined(separator: "."))` has no field `\(path[count].value)`",
                          at: SourceSpan(start: path[count].span.start, end: path[path.count - 1].span.end))
            }
        }
        switch path[0].value {
        case "vars":
            guard let name = field(1, "<name>") else { return }
            noMore(2)
            usedVars.insert(name.value)
            // A variable whose value could not be read has its error already.
            if !varNames.contains(name.value), !workflow.unreadVarNames.contains(name.value) {
                bag.error(.unknownReference, "unknown variable `\(name.value)`", at: name.span,
                          help: varHelp(for: name.value) ?? "declare it under `vars:`")
            }
        case "env":
            guard field(1, "<NAME>") != nil else { return }
            noMore(2)
        case "params":
            guard let name = field(1, "<name>") else { return }
            noMore(2)
            guard let action = scope.action else {
                bag.error(.unknownReference, "`params` exist only inside an action", at: whole,
                          help: "pass values to steps with `vars` or `env`")
                return
            }
            scope.usedParams.insert(name.value)
            if actionTable.param(named: name.value, of: action.name.value) == nil, !action.paramsUnread {
                bag.error(.unknownReference, "action `\(action.name.value)` has no parameter `\(name.value)`", at: name.span,
                          help: Suggestion.help(for: name.value, in: action.params.map(\.name.value)) ?? "declare it under `params:`")
            }
        case "workflow":
            guard let name = field(1, "name") else { return }
            noMore(2)
            if name.value != "name" {
                bag.error(.unknownReference, "unknown field `workflow.\(name.value)`", at: name.span, help: "the field is `workflow.name`")
            }
        case "run":
            guard let name = field(1, "status") else { return }
            noMore(2)
            if !["id", "status"].contains(name.value) {
                bag.error(.unknownReference, "unknown field `run.\(name.value)`", at: name.span,
                          help: Suggestion.help(for: name.value, in: ["id", "status"]) ?? "the fields are `run.id` and `run.status`")
            }
        case "steps":
            checkStepReference(path, whole: whole, at: site)
        default:
            // A lone name may be a literal in the wrong case (`TRUE`, `Null`): suggest it,
            // not the root it happens to be near (`run`).
            let candidates = path.count == 1 ? Self.literals + Self.roots : Self.roots
            let foreign = path.count > 1 ? Self.foreignRoots[path[0].value] : nil
            // `needs.build.result` is `steps.build.status`, as `steps.build.outcome` is.
            var rest = path.dropFirst().map(\.value)
            if foreign == "steps", rest.count == 2, Self.foreignStepFields.contains(rest[1]) { rest[1] = "status" }
            // `${{ version }}`: just's `{{version}}` half converted; the var or param it names.
            var declared: String?
            if path.count == 1 {
                if let action = scope.action, let param = foreignParamIndex(of: action).match(path[0].value) {
                    declared = "params." + param
                } else if let variable = foreignVarIndex().match(path[0].value) {
                    declared = "vars." + variable
                }
            }
            bag.error(.unknownReference, "unknown reference `\(text)`", at: whole,
                      help: foreign.map { "flow calls this `\(([$0] + rest).joined(separator: "."))`" }
                        ?? declared.map { "did you mean `\($0)`?" }
                        ?? Self.foreignContextHelp(path.map(\.value))
                        ?? Suggestion.closest(to: path[0].value, in: candidates).map { "did you mean `\($0)`?" }
                        ?? "references start with `vars.`, `env.`, `params.`, `steps.`, `workflow.` or `run.`")
        }
    }

    /// GitHub Actions' `github` and `matrix` contexts, which have no counterpart a
    /// spelling suggestion could find: say where such a value comes from in flow instead.
    static func foreignContextHelp(_ path: [String]) -> String? {
        guard path.count > 1 else { return nil }
        switch path[0] {
        case "github":
            // The runner exports most of the context as `GITHUB_<FIELD>` (`github.sha` is
            // `GITHUB_SHA`); a flow run in a GitHub Actions step inherits them.
            if path.count == 2 {
                return "flow has no `github` context; when flow runs in GitHub Actions, the runner's environment has it: `env.GITHUB_\(path[1].uppercased())`"
            }
            return "flow has no `github` context; when flow runs in GitHub Actions, the runner's `GITHUB_…` variables are in `env`"
        case "matrix":
            return "flow has no matrix: write one step per value in a `concurrent` group, or an action with a parameter `\(path[1])` used once per value (`with: { \(path[1]): … }`)"
        default:
            return nil
        }
    }

    mutating func checkStepReference(_ path: [Located<String>], whole: SourceSpan, at site: ReferenceSite?) {
        guard path.count >= 3 else {
            bag.error(.unknownReference, "`\(path.map(\.value).joined(separator: "."))` is incomplete", at: whole,
                      help: "write `steps.<name>.outputs.<key>`, `steps.<name>.status` or `steps.<name>.exit_code`")
            return
        }
        let name = path[1], field = path[2]
        guard let target = scope.steps[name.value] else {
            // A step that could not be read has its error already (see `noteUnread`). Not
            // so a reference from the workflow's `env` or `defaults`, which no step has run
            // for, whichever it is: a mistake of its own, hidden until the step was fixed.
            if scope.unreadSteps.contains(name.value) {
                if site == nil {
                    bag.error(.laterReference, "`\(name.value)` has not run when the workflow's `env` and `defaults` are evaluated", at: name.span)
                }
                return
            }
            let place = scope.action.map { "action `\($0.name.value)`" } ?? "this workflow"
            bag.error(.unknownReference, "no step named `\(name.value)` in \(place)", at: name.span,
                      help: stepHelp(for: name.value) ?? otherScopeHelp(for: name.value))
            return
        }
        var noOutputs: SourceSpan?
        switch field.value {
        case "outputs":
            guard path.count >= 4 else {
                bag.error(.unknownReference, "`steps.\(name.value).outputs` needs a key", at: whole, help: "write `steps.\(name.value).outputs.<key>`")
                return
            }
            if path.count > 4 {
                bag.error(.unknownReference, "an output has no fields", at: SourceSpan(start: path[4].span.start, end: whole.end))
            }
            let key = path[3]
            // Only a shell process can write `$FLOW_OUTPUT`: the outputs of any other step
            // (a `use` above all, which GitHub Actions users expect to have outputs) would
            // always be empty, without a word. Reported below once the order is right: one
            // error per reference, and "has not run yet" is the more basic one.
            if target.kind != "shell" {
                noOutputs = key.span
            } else if let declared = target.outputs, !declared.contains(where: { $0.value == key.value }) {
                bag.error(.undeclaredOutput, "step `\(name.value)` does not declare the output `\(key.value)`", at: key.span,
                          help: Suggestion.help(for: key.value, in: declared.map(\.value))
                            ?? "add it to the `outputs` of `\(name.value)`",
                          notes: [.init("`\(name.value)` declares its outputs here",
                                         at: declared.first.map { SourceSpan(start: $0.span.start, end: (declared.last ?? $0).span.end) } ?? target.name.span)])
            }
        case "status", "exit_code":
            if path.count > 3 {
                bag.error(.unknownReference, "`steps.\(name.value).\(field.value)` has no fields", at: SourceSpan(start: path[3].span.start, end: whole.end))
            }
        default:
            bag.error(.unknownReference, "steps have no field `\(field.value)`", at: field.span,
                      help: Self.foreignStepFields.contains(field.value)
                        ? "flow calls this `steps.\(name.value).status`; its values are flow's states, such as `succeeded` and `failed`"
                        : Suggestion.help(for: field.value, in: ["outputs", "status", "exit_code"])
                            ?? "the fields are `outputs.<key>`, `status` and `exit_code`")
            return
        }
        if let site, site.path.hasFinished(target.path) {
            if let noOutputs {
                bag.error(.undeclaredOutput, "step `\(name.value)` is a `\(target.kind)` step, which has no outputs", at: noOutputs,
                          help: Self.noOutputsHelp(kind: target.kind),
                          notes: [.init("`\(name.value)` is here", at: target.name.span)])
            }
            return
        }
        guard let site else {
            bag.error(.laterReference, "`\(name.value)` has not run when the workflow's `env` and `defaults` are evaluated", at: name.span,
                      notes: [.init("`\(name.value)` is here", at: target.name.span)])
            return
        }
        let note = Diagnostic.Note("`\(name.value)` is here", at: target.name.span)
        switch site.path.relation(to: target.path) {
        case .concurrent:
            bag.error(.concurrentReference,
                      "\(site.description) refers to step `\(name.value)`, which may run at the same time",
                      at: name.span, help: "move `\(name.value)` before the `concurrent` group, or both into a `sequential` group",
                      notes: [note])
        case .ancestor:
            // What the reference reads is set only when the target has finished, and the
            // site runs inside it (or is it), so it can never see the value.
            let what = field.value == "outputs" ? "the outputs" : field.value == "status" ? "the status" : "the exit code"
            let are = field.value == "outputs" ? "are" : "is"
            if site.path == target.path {
                bag.error(.laterReference,
                          "\(site.name.map { "`\($0)`" } ?? "this step") refers to \(what.replacing("the ", with: "its own ")), which \(are) not set until it finishes",
                          at: name.span, help: "refer to `\(name.value)` from a later step", notes: [note])
            } else {
                bag.error(.laterReference,
                          "\(site.name.map { "`\($0)`" } ?? "this step") refers to \(what) of its own enclosing group `\(name.value)`, which \(are) not set until the group finishes",
                          at: name.span, help: "refer to `\(name.value)` from a step after the group", notes: [note])
            }
        case .descendant:
            bag.error(.laterReference, "\(site.description) refers to `\(name.value)`, which runs inside it", at: name.span,
                      help: "refer to it from a later step, or from this group's `finally`", notes: [note])
        case .later:
            bag.error(.laterReference, "\(site.description) refers to step `\(name.value)`, which has not run yet", at: name.span,
                      help: "a step can use only steps that finished before it", notes: [note])
        }
    }

    /// The help for a step name that is not in the current scope but in another one: an
    /// action's steps and the workflow's cannot see each other, which users of GitHub
    /// Actions' composite actions (or go-task's `deps`) do not always expect.
    mutating func otherScopeHelp(for name: String) -> String? {
        if stepOwners == nil {
            // Built once, at the first unknown name: a file may have thousands of them.
            var owners: [String: [String]] = [:]
            func collect(_ steps: [Step], owner: String) {
                for step in steps {
                    if let stepName = step.name?.value, owners[stepName]?.last != owner { owners[stepName, default: []].append(owner) }
                    collect(step.children, owner: owner)
                    collect(step.finallySteps, owner: owner)
                    collect(step.undo ?? [], owner: owner)
                }
            }
            collect(workflow.steps + workflow.finally, owner: "")
            for action in workflow.actions { collect(action.steps, owner: action.name.value) }
            stepOwners = owners
        }
        let here = scope.action?.name.value ?? ""
        let owners = (stepOwners?[name] ?? []).filter { $0 != here }
        if scope.action != nil, owners.contains("") {
            return "`\(name)` is a step of the workflow, which an action's steps cannot see: pass what they need in with `with:` on the `use` step"
        }
        guard let owner = owners.first else { return nil }
        return "`\(name)` is a step of action `\(owner)`, seen only inside that action"
    }

    /// What to do instead of reading the outputs of a step of `kind`, which writes none.
    static func noOutputsHelp(kind: String) -> String {
        switch kind {
        case "use":
            "actions pass no outputs back: compute the value in a shell step before the `use` and pass it in with `with:`"
        case "sequential", "concurrent":
            "only shell steps write outputs: refer to the shell step inside the group that writes it"
        default:
            "only shell steps write outputs"
        }
    }

    /// `${{ }}` inside single quotes, right after a backslash, or in a here-document whose
    /// delimiter is quoted, in a shell command would not expand: an error.
    mutating func checkShellQuoting(_ template: Template) {
        var quoting = ShellQuoting()
        for part in template.parts {
            switch part {
            case .text(let text): quoting.feed(text)
            case .expression(_, _, let span):
                if quoting.inSingleQuotes {
                    bag.error(.singleQuotedExpression, "an expression inside single quotes in a shell command is never expanded",
                              at: span, help: "use double quotes around it: \"${{ … }}\"")
                } else if quoting.escapesExpression {
                    bag.error(.singleQuotedExpression,
                              "an expression right after a backslash in a shell command is never expanded",
                              at: span, help: "the backslash makes its `$` literal: remove it")
                } else if quoting.dollarBeforeExpression {
                    // `$${{ … }}` becomes `$${FLOW_EXPR_n}`: the pid, then `{FLOW_EXPR_n}`
                    // as text, while `flow plan` (text substitution) would show `$value`.
                    bag.error(.singleQuotedExpression,
                              "an expression right after `$` in a shell command is never expanded",
                              at: span, help: "`$${FLOW_EXPR_n}` reads as `$$` (the shell's pid); for a literal `$` before the value write `\\$${{ … }}`")
                } else if let document = quoting.body, document.quoted {
                    bag.error(.singleQuotedExpression,
                              "an expression in a here-document with a quoted delimiter is never expanded",
                              at: span, help: "unquote the delimiter: <<\(document.stripsTabs ? "-" : "")\(document.delimiter)")
                }
                quoting.feedWord()
            }
        }
    }
}
