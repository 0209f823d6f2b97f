/// Other tools' placeholders (`{{.VERSION}}`, `{{ version }}`, `$(VERSION)`) that name something flow
/// would substitute: a user porting a Taskfile, a justfile or a playbook meant
/// `${{ vars.version }}`, and flow would run the braces as text.
extension Validator {
    /// Warns about `placeholder` when its name is a param of the enclosing action or a
    /// workflow var; any other name is left alone, as it is most likely the template of a
    /// program the command runs (`docker inspect --format '{{.State.Running}}'`).
    mutating func checkForeignPlaceholder(_ placeholder: ForeignPlaceholder) {
        let reference: String
        if let action = scope.action, let param = foreignParamIndex(of: action).match(placeholder.name) {
            reference = "params." + param
            if scope.foreignParamUses[param] == nil { scope.foreignParamUses[param] = placeholder }
        } else if let variable = foreignVarIndex().match(placeholder.name) {
            reference = "vars." + variable
            if foreignVarUses[variable] == nil { foreignVarUses[variable] = placeholder }
        } else if placeholder.syntax == .goTemplate, let help = Self.goTaskSpecialHelp[placeholder.name] {
            // go-task's own variables (`{{.CLI_ARGS}}`, a `for:` loop's `{{.ITEM}}`): no var
            // of the file, yet certainly go-task's (a program's Go template would not use
            // these names), and flow has something else for each.
            bag.warning(.foreignTemplate, "`\(placeholder.written)` is \(placeholder.whatItIs)", at: placeholder.span, help: help)
            return
        } else {
            return
        }
        bag.warning(.foreignTemplate, "`\(placeholder.written)` is \(placeholder.whatItIs)",
                    at: placeholder.span, help: "flow writes it `${{ \(reference) }}`")
    }

    /// go-task's special variables, each with what flow has instead.
    static let goTaskSpecialHelp: [String: String] = [
        "CLI_ARGS": "flow passes no words on to the steps: declare a var and give it with `--var NAME=…`",
        "ITEM": "flow has no loops: write one step per value (in a `concurrent` group to run them at once)",
        "ROOT_DIR": "steps run in the directory flow runs in (`$PWD`), not the workflow's",
        "TASKFILE_DIR": "steps run in the directory flow runs in (`$PWD`), not the workflow's",
        "USER_WORKING_DIR": "steps run in the directory flow runs in: `$PWD`",
        "TASK": "the running step's label is `$FLOW_STEP` (`${{ env.FLOW_STEP }}`)",
    ]

    /// The workflow's vars, indexed at the first placeholder.
    mutating func foreignVarIndex() -> DeclaredNames {
        if let names = foreignVarNames { return names }
        let names = DeclaredNames(workflow.vars.map(\.name.value))
        foreignVarNames = names
        return names
    }

    /// The enclosing action's params, indexed at the first placeholder in its scope.
    mutating func foreignParamIndex(of action: Action) -> DeclaredNames {
        if let names = scope.foreignParamNames { return names }
        let names = DeclaredNames(action.params.map(\.name.value))
        scope.foreignParamNames = names
        return names
    }

    /// The help (and note) of an unused var or param: when a `{{…}}` was written for it,
    /// that is why it looks unused, and the fix is to rewrite it, not to remove the name.
    static func unusedHelp(reference: String, foreign: ForeignPlaceholder?) -> (String, [Diagnostic.Note]) {
        guard let foreign else { return ("use it as `${{ \(reference) }}`, or remove it", []) }
        return ("flow does not expand `\(foreign.written)`: write it `${{ \(reference) }}`",
                [.init("`\(foreign.written)` is here", at: foreign.span)])
    }
}
