/// Builds the `Plan` of a valid workflow: expands actions, applies defaults, merges
/// environments down the tree, and marks what `--tags`, `--skip-tags` and `--only` select.
public struct Planner {
    let workflow: Workflow
    let options: PlanOptions
    var nextScope = 1
    /// The variables after `--var`, for checking `with` values built from them.
    var statics: StaticContext

    /// The actions and their parameters by name, built once.
    let actionTable: ActionTable
    /// `--tags` and `--skip-tags` as sets: each step's tags are looked up in them (searching
    /// the lists made 20,000 tagged steps with as many tags given take 9 s).
    let wantedTags: Set<String>
    let skippedTags: Set<String>
    /// Whether the plan is for running: only then is each shell command's argv for a direct
    /// exec worked out (`PlanNode.ShellTask.directArgv`), which printing never reads (it was
    /// 5% of `flow plan`'s instructions on 100,000 steps).
    var forRunning = true

    /// How deep `use` steps may nest (an action using one that uses one…): planning
    /// recurses once per level.
    public static let maxUseDepth = 64

    public init(workflow: Workflow, options: PlanOptions) {
        self.workflow = workflow
        self.options = options
        actionTable = ActionTable(workflow.actions)
        wantedTags = Set(options.tags)
        skippedTags = Set(options.skipTags)
        statics = StaticContext(vars: [:], workflowName: workflow.displayName)
    }

    /// Plans `workflow`; throws `PlanError` for command-line choices that do not fit it.
    /// `forRunning: false` for a plan that is only shown or compared (see `forRunning`).
    public static func plan(_ workflow: Workflow, options: PlanOptions = PlanOptions(), forRunning: Bool = true) throws(PlanError) -> Plan {
        var planner = Planner(workflow: workflow, options: options)
        planner.forRunning = forRunning
        return try planner.build()
    }

    /// Inherited context while walking down the tree.
    struct Context {
        var env: [EnvVar]
        var shell: ShellProgram
        /// Tag selection: an ancestor matched `--tags`.
        var tagMatched: Bool
        /// `--only`: an ancestor is the chosen step.
        var insideOnly: Bool
        /// `--skip-tags`: an ancestor carries a skipped tag.
        var skipped = false
        var scope: Int
        var depth: Int
        /// How many `use` steps enclose this point (see `Planner.maxUseDepth`).
        var useDepth = 0
        /// The parameters of the enclosing action invocation, each with its value when it
        /// is known before the run (nil: from an output, say), so that an action passing
        /// its own parameter on to another is checked against `allowed` before anything runs.
        var params: [String: String?] = [:]
        /// Where the enclosing action's parameters came from ("the use of `a` at
        /// wf.yaml:3:5"), for an error about a value they made.
        var paramsOrigin: String?
    }

    /// The help for `--var NAME=VALUE` when NAME is no variable but a parameter of ACTION
    /// (or, without ACTION, of an action): go-task and just pass both the same way, so the
    /// option is easily the wrong one; nil when no action has such a parameter.
    static func paramHelp(for name: String, value: String, action: String?, in workflow: Workflow) -> String? {
        let owners = workflow.actions.filter { $0.params.contains { $0.name.value == name } }
        if let action {
            guard owners.contains(where: { $0.name.value == action }) else { return nil }
            return "`\(name)` is a parameter of action `\(action)`: pass it with --with \(name)=\(value)"
        }
        guard let owner = owners.first else { return nil }
        return "`\(name)` is a parameter of action `\(owner.name.value)`: run it alone with FILE \(owner.name.value) --with \(name)=\(value)"
    }

    /// The help for ACTION `NAME=VALUE`, which names no action (an action's name has no
    /// `=`): `task TAG=v1` (go-task), `make ENV=prod` and just take variables as such words,
    /// flow only through `--var` and `--with`. Says which of the two sets NAME; nil when
    /// the word has no `=` after a name.
    static func keyValueHelp(for word: String, isVariable: (String) -> Bool, in workflow: Workflow) -> String? {
        guard let equals = word.firstIndex(of: "="), equals != word.startIndex else { return nil }
        let name = String(word[..<equals])
        let value = String(word[word.index(after: equals)...])
        if isVariable(name) { return "`\(name)` is a variable of the workflow: set it with --var \(word)" }
        if let help = paramHelp(for: name, value: value, action: nil, in: workflow) { return help }
        // make's `VERSION=1.4` for a Makefile ported as the guide says, to `vars.version`:
        // names are case-sensitive, so the help names the spelling that sets one, not a
        // `--var VERSION=1.4` that would be refused in its turn.
        let folded = name.lowercased()
        if let variable = workflow.vars.first(where: { $0.name.value.lowercased() == folded })?.name.value {
            return "`\(variable)` is a variable of the workflow (names are case-sensitive): set it with --var \(variable)=\(value)"
        }
        for action in workflow.actions {
            if let param = action.params.first(where: { $0.name.value.lowercased() == folded })?.name.value {
                return "`\(param)` is a parameter of action `\(action.name.value)` (names are case-sensitive): "
                    + "run it alone with FILE \(action.name.value) --with \(param)=\(value)"
            }
        }
        return "flow takes no `key=value` words: --var \(word) sets a variable of the workflow, FILE ACTION --with \(word) a parameter of ACTION"
    }

    /// The help for ACTION `-v`: only a word after `--` gets there with a leading `-` (an
    /// action's name has none), and go-task's `task -- -v` passes it to the commands
    /// (`{{.CLI_ARGS}}`). flow passes none on, as a word after ACTION is told already.
    static func passedWordHelp(for word: String) -> String? {
        guard word.hasPrefix("-") else { return nil }
        return "flow took `\(word)`, after `--`, for ACTION; it passes no words on to the commands it runs: "
            + "give values as variables (--var NAME=VALUE, read as ${{ vars.NAME }})"
    }

    mutating func build() throws(PlanError) -> Plan {
        if options.action == nil, let first = options.with.first {
            throw PlanError("--with \(first.name)=… sets a parameter of an action, but no ACTION was given",
                            help: "name the action after the file: FILE ACTION --with \(first.name)=…")
        }
        var vars = workflow.vars.map { ($0.name.value, $0.value.value) }
        // Positions by name, made once: a search of the list per `--var` made 10,000 of
        // them take 2 s (debug build).
        var positions: [String: Int] = [:]
        for (index, variable) in vars.enumerated() where positions[variable.0] == nil { positions[variable.0] = index }
        for (name, value) in options.vars {
            guard let index = positions[name] else {
                throw PlanError("unknown variable `\(name)` in --var",
                                help: Self.paramHelp(for: name, value: value, action: options.action, in: workflow)
                                    ?? Suggestion.help(for: name, in: vars.map(\.0)) ?? "declare it under `vars:` in the workflow")
            }
            vars[index].1 = value
        }
        statics.vars = Dictionary(vars, uniquingKeysWith: { $1 })
        let onlyScope = SelectionNames.onlyScope(workflow, action: options.action)
        if let only = options.only, !Self.contains(name: only, in: onlyScope) {
            let names = SelectionNames.onlyNames(workflow, action: options.action)
            // A name that is there, but where --only cannot reach, is said as such (it
            // said "no step named", and suggested another name).
            // With ACTION, a step of the workflow's own `steps` is not run at all: say so,
            // and how to select it (it said "no step named", as if it were a typo).
            if let action = options.action, Self.contains(name: only, in: workflow.steps + workflow.finally) {
                throw PlanError("`\(only)` is a step of the workflow, which running action `\(action)` alone does not run",
                                help: "to select it, leave out the action: \(Self.fileWord(workflow)) --only \(only)")
            }
            if let place = Self.unreachablePlace(of: only, in: onlyScope, actions: workflow.actions) {
                // A step among an action's own steps is selectable when that action is run
                // alone: the help says how, rather than only what --only does.
                let owner = workflow.actions.first { $0.name.value != options.action && Self.contains(name: only, in: $0.steps) }
                throw PlanError("`\(only)` is \(place), which --only cannot select",
                                help: owner.map { "to select it, run the action alone: \(Self.fileWord(workflow)) \($0.name.value)"
                                    + Self.requiredWith($0) + " --only \(only)" }
                                    ?? "--only selects a step of the workflow's steps (or of ACTION's), with its group context")
            }
            throw PlanError("no step named `\(only)` for --only", help: Suggestion.help(for: only, in: names))
        }
        let context = Context(env: workflow.env, shell: workflow.defaults.shell?.value ?? workflow.shell?.value ?? .sh,
                              tagMatched: options.tags.isEmpty, insideOnly: options.only == nil, scope: 0, depth: 0)
        let root: PlanNode
        if let actionName = options.action {
            guard let action = actionTable.action(named: actionName) else {
                throw PlanError("unknown action `\(actionName)`",
                                help: Self.passedWordHelp(for: actionName)
                                    ?? Self.keyValueHelp(for: actionName, isVariable: { positions[$0] != nil }, in: workflow)
                                    ?? Suggestion.help(for: actionName, in: workflow.actions.map(\.name.value))
                                    ?? (workflow.actions.isEmpty ? "this workflow declares no actions" : "the actions are "
                                        + Suggestion.list(workflow.actions.map(\.name.value))))
            }
            var with: [(name: String, value: Template)] = []
            for (name, value) in options.with {
                guard let param = actionTable.param(named: name, of: action.name.value) else {
                    // A workflow variable passed as a parameter (go-task and just pass both the same way).
                    let isVar = positions[name] != nil
                    throw PlanError("action `\(actionName)` has no parameter `\(name)`",
                                    help: (isVar ? "`\(name)` is a variable of the workflow: set it with --var \(name)=\(value)" : nil)
                                        ?? Suggestion.help(for: name, in: action.params.map(\.name.value))
                                        ?? (action.params.isEmpty ? "it takes no parameters" : "its parameters are "
                                            + Suggestion.list(action.params.map(\.name.value))))
                }
                if let allowed = param.allowed, !allowed.contains(where: { $0.value.isIdentical(to: value) }) {
                    throw PlanError("\(Param.shown(value)) is not an allowed value of `\(name)`",
                                    help: Param.allowedHelp(for: value, allowed: allowed.map(\.value), quoted: false))
                }
                with.append((name, Template(literal: value, span: action.name.span)))
            }
            // Every missing one at once, as validate reports each at a `use` site: one at a
            // time, the user learnt of the next only by running again.
            let missing = action.params.filter { param in param.required && !with.contains { $0.name == param.name.value } }
                .map(\.name.value)
            if missing.count == 1 {
                throw PlanError("action `\(actionName)` needs the parameter `\(missing[0])`", help: "pass it with --with \(missing[0])=VALUE")
            } else if !missing.isEmpty {
                throw PlanError("action `\(actionName)` needs the parameters " + Suggestion.list(missing, limit: missing.count),
                                help: "pass them with " + missing.map { "--with \($0)=VALUE" }.joined(separator: " "))
            }
            let invocation = try useNode(action: action, with: with, path: "", name: nil, base: nil, context: context)
            root = invocation
        } else {
            let children = try nodes(workflow.steps, prefix: "", context: context)
            let finally = try nodes(workflow.finally, prefix: "f", context: context)
            root = PlanNode(path: "", name: nil, kind: .sequential, children: children, finally: finally, undo: [],
                            condition: nil, timeout: nil, retry: nil, continueOnError: false, tags: [], env: workflow.env,
                            outputs: nil, description: workflow.description?.value,
                            selected: children.contains(where: \.selected) || finally.contains(where: \.selected),
                            scope: 0, span: workflow.stepsSpan)
        }
        try Self.checkTags(options, in: root)
        return Plan(workflowName: workflow.displayName, file: workflow.file, root: root, vars: vars,
                    action: options.action, rollback: workflow.rollback?.value ?? true, shell: context.shell)
    }

    mutating func nodes(_ steps: [Step], prefix: String, context: Context) throws(PlanError) -> [PlanNode] {
        var out: [PlanNode] = []
        out.reserveCapacity(steps.count)
        for (index, step) in steps.enumerated() {
            out.append(try node(step, path: prefix + String(index + 1), context: context))
        }
        return out
    }

    mutating func node(_ step: Step, path: String, context: Context) throws(PlanError) -> PlanNode {
        let tags = step.tags.map(\.value)
        var inner = context
        inner.env = step.env.isEmpty ? context.env : context.env + step.env
        if let shell = step.shell { inner.shell = shell.value }
        inner.depth += 1
        if !wantedTags.isEmpty, tags.contains(where: wantedTags.contains) { inner.tagMatched = true }
        // `--only` names a step of the workflow (or of the ACTION being run), never one
        // inside another action's body.
        let onlyScope = options.action == nil ? 0 : 1
        if let only = options.only, step.name?.value == only, context.scope == onlyScope { inner.insideOnly = true }
        let skipped = context.skipped || tags.contains(where: skippedTags.contains)
        inner.skipped = skipped
        let alwaysTagged = tags.contains("always")
        if alwaysTagged { inner.tagMatched = true }
        // Made only for a step with steps inside it.
        var sub: String { path.isEmpty ? "" : path + "." }

        let kind: PlanNode.Kind
        var children: [PlanNode] = []
        var finally: [PlanNode] = []
        let isLeaf: Bool
        var isShell = false
        switch step.kind {
        case .print(let p):
            kind = .print(message: p.message, stream: p.stream)
            isLeaf = true
        case .delay(let d):
            kind = .delay(d.value)
            isLeaf = true
        case .shell(let s):
            kind = .shell(PlanNode.ShellTask(command: s.command, program: inner.shell, dir: s.dir ?? workflow.defaults.dir,
                                             stdin: s.stdin, interactive: s.interactive?.value ?? false,
                                             resolvesArgv: forRunning))
            isLeaf = true
            isShell = true
        case .sequential(let group):
            kind = .sequential
            children = try nodes(group.steps, prefix: sub, context: inner)
            if !group.finally.isEmpty { finally = try nodes(group.finally, prefix: sub + "f", context: inner) }
            isLeaf = false
        case .concurrent(let group):
            kind = .concurrent(maxParallel: group.maxParallel?.value, failFast: group.failFast?.value ?? true)
            children = try nodes(group.steps, prefix: sub, context: inner)
            if !group.finally.isEmpty { finally = try nodes(group.finally, prefix: sub + "f", context: inner) }
            isLeaf = false
        case .use(let use):
            guard let action = actionTable.action(named: use.action.value) else {
                throw PlanError("unknown action `\(use.action.value)`")
            }
            return try useNode(action: action, with: use.with, path: path, name: step.name?.value, base: step, context: inner)
        }
        let selectedHere: Bool
        let onPathToOnly = options.only.map { context.scope == onlyScope && Self.contains(name: $0, in: [step]) } ?? true
        if skipped || !inner.insideOnly && !onPathToOnly {
            selectedHere = false
        } else if isLeaf {
            selectedHere = inner.tagMatched || alwaysTagged
        } else {
            selectedHere = children.contains(where: \.selected) || finally.contains(where: \.selected)
        }
        // Most steps have no `undo`, `finally` or children: no path or context is made
        // for an empty list (100,000 steps made 300,000 such strings).
        var undo: [PlanNode] = []
        if let steps = step.undo, !steps.isEmpty {
            undo = try nodes(steps, prefix: sub + "u", context: Self.undoContext(inner, stepSelected: selectedHere))
        }
        return PlanNode(
            path: path, name: step.name?.value, kind: kind, children: children, finally: finally, undo: undo,
            condition: step.condition?.value,
            timeout: step.timeout?.value ?? (isShell ? workflow.defaults.timeout?.value : nil),
            retry: step.retry?.value ?? (isShell ? workflow.defaults.retry?.value : nil),
            continueOnError: step.continueOnError?.value ?? (isShell ? workflow.defaults.continueOnError?.value ?? false : false),
            tags: tags, env: inner.env, outputs: step.outputs?.map(\.value), description: step.description?.value,
            selected: selectedHere, scope: context.scope, span: step.kindSpan, nameSpan: step.name?.span)
    }

    /// An action invocation: a group of the action's steps in a scope of their own.
    mutating func useNode(action: Action, with: [(name: Located<String>, value: Template)], path: String, name: String?,
                          base: Step?, context: Context) throws(PlanError) -> PlanNode
    {
        try useNode(action: action, with: with.map { ($0.name.value, $0.value) }, path: path, name: name, base: base, context: context)
    }

    mutating func useNode(action: Action, with: [(name: String, value: Template)], path: String, name: String?,
                          base: Step?, context: Context) throws(PlanError) -> PlanNode
    {
        // Validation reports a deeper chain at its use site (`use-depth`); this guards
        // the planner's recursion all the same.
        guard context.useDepth < Self.maxUseDepth else {
            throw PlanError("`use` steps nest more than \(Self.maxUseDepth) levels deep (at action `\(action.name.value)`)")
        }
        var inner = context
        inner.useDepth += 1
        inner.scope = nextScope
        nextScope += 1
        // What the `with` values can be computed from now: the variables (after `--var`),
        // the declared env at this step, and the enclosing action's parameters that are
        // themselves known (a chain of actions passing a literal on).
        var known = statics
        known.params = context.params
        known.env = context.env
        // Parameters not given take their defaults, so the plan shows every value.
        var params = with
        // The values given by name, made once: a search of `with` per parameter made an
        // action of 10,000 parameters given as many values take 4.6 s (debug build).
        var given: [String: Template] = [:]
        for (name, value) in with where given[name] == nil { given[name] = value }
        var allowedParams: [String: [String]] = [:]
        for param in action.params {
            guard let allowed = param.allowed?.map(\.value) else { continue }
            allowedParams[param.name.value] = allowed
            // A value known now that is outside `allowed` stops the run before anything
            // starts (it stopped the run when the step started, after the steps before it
            // had run). Literals were checked by validation; values from outputs, or from
            // the process environment, are checked when the step runs.
            guard let value = given[param.name.value], !value.isLiteral,
                  let resolved = known.text(of: value) else { continue }
            if !allowed.contains(where: { $0.isIdentical(to: resolved) }) {
                let fromParams = value.expressions.contains { $0.references.contains { $0.first?.value == "params" } }
                let origin = fromParams ? context.paramsOrigin.map { "; `params` are those of \($0)" } ?? "" : ""
                throw PlanError("\(workflow.file.path):\(value.span.start): \(Param.shown(resolved)) (from `\(value.raw)`) is not an allowed value of "
                                + "`\(param.name.value)` of action `\(action.name.value)`",
                                help: Param.allowedHelp(for: resolved, allowed: allowed, quoted: false) + origin)
            }
        }
        for param in action.params where given[param.name.value] == nil {
            params.append((param.name.value, Template(literal: param.defaultValue?.value ?? "", span: param.name.span)))
        }
        inner.params = known.entering(params).params
        inner.paramsOrigin = base.map { "the use of `\(action.name.value)` at \(workflow.file.path):\($0.kindSpan.start)" }
            ?? "`\(action.name.value)` given on the command line"
        let sub = path.isEmpty ? "" : path + "."
        let children = try nodes(action.steps, prefix: sub, context: inner)
        let skipped = context.skipped || (base.map { $0.tags.contains(where: { skippedTags.contains($0.value) }) } ?? false)
        inner.skipped = skipped
        if base?.tags.contains(where: { $0.value == "always" }) == true { inner.tagMatched = true }
        if let only = options.only, let name, name == only, context.scope == 0, options.action == nil { inner.insideOnly = true }
        let selected = !skipped && children.contains(where: \.selected)
        let undo = try nodes(base?.undo ?? [], prefix: sub + "u", context: Self.undoContext(context, stepSelected: selected))
        return PlanNode(
            path: path, name: name, kind: .use(action: action.name.value, with: params), children: children, finally: [],
            undo: undo, condition: base?.condition?.value, timeout: base?.timeout?.value, retry: base?.retry?.value,
            continueOnError: base?.continueOnError?.value ?? false, tags: base?.tags.map(\.value) ?? [], env: inner.env,
            outputs: nil, description: base?.description?.value ?? action.description?.value,
            selected: selected, scope: context.scope,
            span: base?.kindSpan ?? action.name.span, nameSpan: base?.name?.span, allowedParams: allowedParams)
    }

    /// The context of a step's `undo` steps: a step that is not selected never runs, so
    /// nothing undoes it, whatever the undo steps' own tags select.
    static func undoContext(_ context: Context, stepSelected: Bool) -> Context {
        var undoContext = context
        if !stepSelected { undoContext.skipped = true }
        return undoContext
    }

    /// A tag on the command line that no step carries is a usage error: a typo in `--tags`
    /// would run nothing, and one in `--skip-tags` skip nothing, both with exit status 0.
    static func checkTags(_ options: PlanOptions, in root: PlanNode) throws(PlanError) {
        guard !options.tags.isEmpty || !options.skipTags.isEmpty else { return }
        var known: [String] = []
        var seen: Set<String> = []
        var pending = [root]
        while let node = pending.popLast() {
            for tag in node.tags where seen.insert(tag).inserted { known.append(tag) }
            // Reversed, so that the list pops in file order and the help lists tags so.
            pending += (node.children + node.finally + node.undo).reversed()
        }
        for (option, tags) in [("--tags", options.tags), ("--skip-tags", options.skipTags)] {
            for tag in tags where !seen.contains(tag) {
                throw PlanError("unknown tag `\(tag)` in \(option)", help: Suggestion.help(for: tag, in: known)
                    ?? (known.isEmpty ? "no step of this workflow has tags" : "the tags are " + Suggestion.list(known)))
            }
        }
    }

    /// The workflow's file as a word to type after `flow run` in a help line: its path as
    /// given, single-quoted for a POSIX shell when it holds anything but `[A-Za-z0-9_./-]`,
    /// and `FILE` for a workflow read from standard input (there is no path to give).
    /// A bare `FILE` in every help left the user to retype the path they had just given.
    static func fileWord(_ workflow: Workflow) -> String {
        let path = workflow.file.path
        if path == LoadedWorkflow.stdinName || path.isEmpty { return "FILE" }
        let plain = path.unicodeScalars.allSatisfy {
            ($0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0))) || "_./-".unicodeScalars.contains($0)
        }
        let word = plain && !path.hasPrefix("-") ? path : "'" + path.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
        return ControlEscaping.escaped(word)
    }

    /// ` --with NAME=VALUE` for each parameter of `action` that is required: running the
    /// action alone without them is refused next ("needs the parameter `pkg`"), so the
    /// command a help line gives names them (go-task's and just's help name a recipe's
    /// arguments the same way).
    static func requiredWith(_ action: Action) -> String {
        action.params.filter(\.required).map { " --with \($0.name.value)=VALUE" }.joined()
    }

    /// Where a step called `name` is that `--only` cannot select: in an `undo` list below
    /// `steps`, or among an action's steps.
    static func unreachablePlace(of name: String, in steps: [Step], actions: [Action]) -> String? {
        func undoOwner(_ steps: [Step]) -> String? {
            for step in steps {
                if let undo = step.undo, contains(name: name, in: undo) {
                    return step.name.map { "a step of the `undo` of `\($0.value)`" } ?? "a step of an `undo`"
                }
                if let found = undoOwner(step.children + step.finallySteps + (step.undo ?? [])) { return found }
            }
            return nil
        }
        if let found = undoOwner(steps) { return found }
        if let action = actions.first(where: { contains(name: name, in: $0.steps) || undoOwner($0.steps) != nil }) {
            return "a step of action `\(action.name.value)`"
        }
        return nil
    }

    static func contains(name: String, in steps: [Step]) -> Bool {
        steps.contains { step in
            step.name?.value == name || contains(name: name, in: step.children) || contains(name: name, in: step.finallySteps)
        }
    }
}
