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
        } else {
            return
        }
        bag.warning(.foreignTemplate, "`\(placeholder.written)` is \(placeholder.whatItIs)",
                    at: placeholder.span, help: "flow writes it `${{ \(reference) }}`")
    }

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
