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
        /// The step's kind key (`shell`, `use`, …): only a `shell` step writes outputs.
        var kind: String
        /// The alias the step was reached through, if any (see `Step.aliasSite`).
        var aliasSite: SourceSpan?
    }

    /// The names visible to expressions in one scope (the workflow, or one action's body).
    struct Scope {
        var steps: [String: NamedStep] = [:]
        /// The scope's steps that could not be read (see `Workflow.unreadStepNames`).
        var unreadSteps: Set<String> = []
        /// Set inside an action: its parameters.
        var action: Action?
        var usedParams: Set<String> = []
        /// The first `{{…}}` written for each param (see `ForeignPlaceholder`): when the
        /// param is otherwise unused, this is why, and its warning says so.
        var foreignParamUses: [String: ForeignPlaceholder] = [:]
        /// `action`'s params as placeholders match them, built at the first one.
        var foreignParamNames: DeclaredNames?
        /// "Did you mean" over `steps`, built at the first unknown step name: a file may
        /// have thousands of them, and each used to search (and sort) every name again.
        var stepSuggestions: SuggestionIndex?
    }

    var scope = Scope()
    /// The shell the steps being checked run with, as the planner resolves it (`defaults`,
    /// the workflow's or a group's `shell`); nil inside an action, whose
    /// steps take the shell of the step that uses them.
    var shell: ShellProgram?
    /// Whether `shell` is an enclosing group's `shell:` (not `defaults`' or the workflow's):
    /// where `foreign-shebang`'s help says to change it.
    var shellIsAGroups = false
    var usedVars: Set<String> = []
    /// The first `{{…}}` written for each var, as `Scope.foreignParamUses`.
    var foreignVarUses: [String: ForeignPlaceholder] = [:]
    /// The vars as placeholders match them, built at the first one.
    var foreignVarNames: DeclaredNames?
    /// For each step name, the scopes that have it (`""` the workflow, else an action's
    /// name), built at the first reference to a step the current scope does not have.
    var stepOwners: [String: [String]]?
    /// "Did you mean" over the workflow's variables, built at the first unknown one.
    var varSuggestions: SuggestionIndex?

    /// The help for an unknown step name in the current scope.
    mutating func stepHelp(for name: String) -> String? {
        if scope.stepSuggestions == nil { scope.stepSuggestions = SuggestionIndex(scope.steps.keys.sorted() + scope.unreadSteps.sorted()) }
        return scope.stepSuggestions!.help(for: name)
    }

    /// "Did you mean" over the workflow's actions, built at the first unknown one.
    var actionSuggestions: SuggestionIndex?

    /// The help for an unknown action.
    mutating func actionHelp(for name: String) -> String? {
        if actionSuggestions == nil { actionSuggestions = SuggestionIndex(workflow.actions.map(\.name.value)) }
        return actionSuggestions!.help(for: name)
    }

    /// The help for an unknown variable.
    mutating func varHelp(for name: String) -> String? {
        if varSuggestions == nil { varSuggestions = SuggestionIndex(workflow.vars.map(\.name.value) + workflow.unreadVarNames.sorted()) }
        return varSuggestions!.help(for: name)
    }

    /// `overriddenVars`: the variables set on the command line, whose defaults say nothing
    /// of the values a run will have.
    public init(workflow: Workflow, bag: DiagnosticBag, overriddenVars: Set<String> = []) {
        self.workflow = workflow
        self.bag = bag
        actionTable = ActionTable(workflow.actions)
        varNames = Set(workflow.vars.map(\.name.value))
        // The last of two same-named vars wins, as in the planner (the second is a
        // duplicate-key error anyway). An overridden var is unknown here: the planner
        // checks the value given.
        let defaults = workflow.vars.filter { !overriddenVars.contains($0.name.value) }.map { ($0.name.value, $0.value.value) }
        statics = StaticContext(vars: Dictionary(defaults, uniquingKeysWith: { $1 }), workflowName: workflow.displayName)
    }

    /// The actions and their parameters by name (see `ActionTable`).
    let actionTable: ActionTable
    /// The declared variables' names.
    let varNames: Set<String>
    /// What is known before a run: the default `vars` (less those the command line
    /// overrides) and the workflow's name. `with` values built only from it are checked
    /// against `allowed` here, as the planner checks them with the final vars.
    let statics: StaticContext

    /// Validates `workflow`, adding diagnostics to `bag`.
    public static func validate(_ workflow: Workflow, into bag: inout DiagnosticBag, overriddenVars: Set<String> = []) {
        var validator = Validator(workflow: workflow, bag: bag, overriddenVars: overriddenVars)
        validator.run()
        bag = validator.bag
    }

    mutating func run() {
        var actionIndex: [String: Int] = [:]
        for (i, action) in workflow.actions.enumerated() where actionIndex[action.name.value] == nil {
            actionIndex[action.name.value] = i
        }
        let graph = CallGraph(actions: workflow.actions, index: actionIndex)
        checkRecursion(graph, index: actionIndex)
        checkUseDepth(graph, index: actionIndex)
        checkExpansion(graph, index: actionIndex)
        // The workflow's own scope: steps, finally, and their undo steps.
        scope = Scope(unreadSteps: Set(workflow.unreadStepNames.map(\.value)))
        collectNames(workflow.steps, base: StepPath(components: []), list: .sequential)
        let rootFinallyBase = StepPath(components: [StepPath.Component(list: .finally, index: -1)])
        collectNames(workflow.finally, base: rootFinallyBase, list: .sequential)
        reportDuplicates(amongUnread: workflow.unreadStepNames)
        for env in workflow.env { checkTemplate(env.value, at: nil, context: .text) }
        if let dir = workflow.defaults.dir { checkTemplate(dir, at: nil, context: .text) }
        shell = workflow.defaults.shell?.value ?? workflow.shell?.value ?? .sh
        walk(workflow.steps, base: StepPath(components: []), list: .sequential)
        walk(workflow.finally, base: rootFinallyBase, list: .sequential)
        shell = nil

        for action in workflow.actions {
            scope = Scope(unreadSteps: Set(action.unreadStepNames.map(\.value)), action: action)
            collectNames(action.steps, base: StepPath(components: []), list: .sequential)
            reportDuplicates(amongUnread: action.unreadStepNames)
            walk(action.steps, base: StepPath(components: []), list: .sequential)
            // An action without steps is an error of its own: its params are not "unused".
            for param in action.params where !action.steps.isEmpty && !scope.usedParams.contains(param.name.value)
                && !workflow.namesInUnreadExpressions.contains("params." + param.name.value) {
                let (help, notes) = Self.unusedHelp(reference: "params." + param.name.value, foreign: scope.foreignParamUses[param.name.value])
                bag.warning(.unusedParam, "parameter `\(param.name.value)` of action `\(action.name.value)` is never used",
                            at: param.name.span, help: help, notes: notes)
            }
        }
        var seenVars: Set<String> = []
        for variable in workflow.vars {
            if !seenVars.insert(variable.name.value).inserted { continue }
            if !usedVars.contains(variable.name.value), !workflow.namesInUnreadExpressions.contains("vars." + variable.name.value) {
                let (help, notes) = Self.unusedHelp(reference: "vars." + variable.name.value, foreign: foreignVarUses[variable.name.value])
                bag.warning(.unusedVar, "variable `\(variable.name.value)` is never used", at: variable.name.span,
                            help: help, notes: notes)
            }
        }
    }

    // MARK: Names

    /// Records every named step of a list (recursively), reporting duplicates.
    mutating func collectNames(_ steps: [Step], base: StepPath, list: StepPath.List) {
        for (index, step) in steps.enumerated() {
            // Only names and what is inside a step need its path: most steps have neither.
            let hasChildren: Bool
            switch step.kind {
            case .sequential, .concurrent: hasChildren = true
            default: hasChildren = step.undo != nil
            }
            guard step.name != nil || hasChildren else { continue }
            let path = base.appending(list, index)
            if let name = step.name {
                if let first = scope.steps[name.value] {
                    // Through an alias, the name's text is the anchored one, shared by every
                    // use: point at the uses, and at the text once.
                    let firstSpan = first.aliasSite ?? first.name.span
                    reportDuplicate(name.value, at: step.aliasSite ?? name.span, first: firstSpan,
                                    aliasText: step.aliasSite != nil && name.span != firstSpan ? name.span : nil)
                } else {
                    scope.steps[name.value] = NamedStep(name: name, path: path, outputs: step.outputs, kind: step.kind.keyword, aliasSite: step.aliasSite)
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

    /// Reports the duplicates that involve the current scope's steps left out of the model
    /// for an error (`Workflow.unreadStepNames`): such a step still takes its name, as it
    /// does for references, so a second `build` is reported whichever of the two has the
    /// error. Every occurrence but the first in the file gets one error; those among the
    /// named steps alone `collectNames` has reported.
    mutating func reportDuplicates(amongUnread unread: [Located<String>]) {
        guard !unread.isEmpty else { return }
        var sites: [String: [SourceSpan]] = [:]
        for name in unread { sites[name.value, default: []].append(name.span) }
        for (name, unreadSpans) in sites.sorted(by: { $0.key < $1.key }) {
            let named = scope.steps[name].map { $0.aliasSite ?? $0.name.span }
            let all = (unreadSpans + (named.map { [$0] } ?? [])).sorted { $0.start < $1.start }
            // The same text twice is one anchored step brought in again by an alias.
            for span in all.dropFirst() where span != all[0] {
                reportDuplicate(name, at: span, first: all[0], aliasText: nil)
            }
        }
    }

    /// The `duplicate-name` error for a step named `name` at `span` after the one at `first`;
    /// `aliasText` is the name's text when an alias brought it in from elsewhere.
    mutating func reportDuplicate(_ name: String, at span: SourceSpan, first: SourceSpan, aliasText: SourceSpan?) {
        var notes: [Diagnostic.Note] = [.init("`\(name)` is first used here", at: first)]
        if let aliasText { notes.append(.init("the alias brings in the name from here", at: aliasText)) }
        bag.error(.duplicateName, "duplicate step name `\(name)`", at: span,
                  help: "step names are unique in a \(scope.action == nil ? "workflow" : "action")",
                  notes: notes)
    }

    // MARK: Walk

    /// Checks every step of a list (and everything inside).
    mutating func walk(_ steps: [Step], base: StepPath, list: StepPath.List) {
        for (index, step) in steps.enumerated() {
            check(step, path: base.appending(list, index))
        }
    }

    /// A command whose `#!` line names `bash`, `zsh` or `ksh` while the step runs with `sh`
    /// (or `dash`): the line is a comment to `sh -c`, and the script's bash-isms fail there
    /// (`[[: not found`, `set: Illegal option -o pipefail`), which is what its author did
    /// not expect. A `#!/bin/sh` under `bash` is left alone: bash runs sh's scripts.
    mutating func checkShebang(_ shebang: Located<String>) {
        guard let shell, ["sh", "dash"].contains(shell.name), ["bash", "zsh", "ksh"].contains(shebang.value) else { return }
        bag.warning(.foreignShebang, "the command's `#!` line names `\(shebang.value)`, but the step runs with `\(shell.spec)`, to which that line is a comment",
                    at: shebang.span, help: shellIsAGroups
                        ? "set the enclosing group's `shell:` to `\(shebang.value)`, or put the step in a `sequential` group of its own with `shell: \(shebang.value)`"
                        // Not "on the step": a shell step's own `shell:` is its command.
                        : "set `shell: \(shebang.value)` in `defaults`, for every step, or on a `sequential` group around this one")
    }

    mutating func check(_ step: Step, path: StepPath) {
        // What a `<<: *x` merged into the step is reported at the merge, as while parsing.
        let merges = step.merges
        let mark = bag.merges.count
        if !merges.isEmpty { bag.merges += merges }
        defer { if !merges.isEmpty { bag.merges.removeSubrange(mark...) } }
        let site = ReferenceSite(step: step, path: path)
        let outer = (shell, shellIsAGroups)
        if let own = step.shell, shell != nil { (shell, shellIsAGroups) = (own.value, true) }
        defer { (shell, shellIsAGroups) = outer }
        if let condition = step.condition {
            checkExpression(condition.value, at: site, context: .condition)
        }
        for env in step.env { checkTemplate(env.value, at: site, context: .text) }
        switch step.kind {
        case .print(let p):
            checkTemplate(p.message, at: site, context: .text)
        case .delay:
            break
        case .shell(let s):
            checkTemplate(s.command, at: site, context: .shell)
            if let shebang = s.shebang { checkShebang(shebang) }
            if let dir = s.dir { checkTemplate(dir, at: site, context: .text) }
            if let stdin = s.stdin { checkTemplate(stdin, at: site, context: .text) }
            if let interactive = s.interactive, interactive.value, let stdin = s.stdin {
                bag.error(.conflictingOptions, "a step cannot be `interactive` and have `stdin`", at: stdin.span,
                          help: "an interactive step reads the terminal",
                          notes: [.init("`interactive` is set here", at: interactive.span)])
            }
        case .sequential(let group):
            walk(group.steps, base: path, list: .sequential)
            walk(group.finally, base: path, list: .finally)
        case .concurrent(let group):
            walk(group.steps, base: path, list: .concurrent)
            walk(group.finally, base: path, list: .finally)
        case .use(let use):
            for (_, value) in use.with { checkTemplate(value, at: site, context: .text) }
            checkUse(use, at: step)
        }
        if let undo = step.undo { walk(undo, base: path, list: .undo) }
    }
}
