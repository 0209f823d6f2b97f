/// Other tools' placeholders (`{{.VERSION}}`, `{{ version }}`) that name something flow
/// would substitute: a user porting a Taskfile, a justfile or a playbook meant
/// `${{ vars.version }}`, and flow would run the braces as text.
extension Validator {
    /// Warns about `placeholder` when its name is a param of the enclosing action or a
    /// workflow var; any other name is left alone, as it is most likely the template of a
    /// program the command runs (`docker inspect --format '{{.State.Running}}'`).
    mutating func checkForeignPlaceholder(_ placeholder: ForeignPlaceholder) {
        let reference: String
        if let action = scope.action, let param = Self.match(placeholder.name, in: action.params.map(\.name.value)) {
            reference = "params." + param
            if scope.foreignParamUses[param] == nil { scope.foreignParamUses[param] = placeholder }
        } else if let variable = Self.match(placeholder.name, in: workflow.vars.map(\.name.value)) {
            reference = "vars." + variable
            if foreignVarUses[variable] == nil { foreignVarUses[variable] = placeholder }
        } else {
            return
        }
        bag.warning(.foreignTemplate, "`\(placeholder.written)` is \(placeholder.syntax): flow leaves it as text",
                    at: placeholder.span, help: "flow writes it `${{ \(reference) }}`")
    }

    /// The declared name `name` is: itself, else the first that differs only in case
    /// (go-task's vars are often upper case where the ported flow file's are not).
    static func match(_ name: String, in declared: [String]) -> String? {
        if declared.contains(name) { return name }
        let folded = name.lowercased()
        return declared.first { $0.lowercased() == folded }
    }

    /// The help (and note) of an unused var or param: when a `{{…}}` was written for it,
    /// that is why it looks unused, and the fix is to rewrite it, not to remove the name.
    static func unusedHelp(reference: String, foreign: ForeignPlaceholder?) -> (String, [Diagnostic.Note]) {
        guard let foreign else { return ("use it as `${{ \(reference) }}`, or remove it", []) }
        return ("flow does not expand `\(foreign.written)`: write it `${{ \(reference) }}`",
                [.init("`\(foreign.written)` is here", at: foreign.span)])
    }
}
