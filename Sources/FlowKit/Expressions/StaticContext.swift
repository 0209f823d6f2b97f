/// What is known before anything runs: variables, the workflow name, literal parameters and
/// environment values. Used to show resolved commands in plans, and by validation and
/// planning to check `with` values against `allowed` once they are known.
struct StaticContext: ExpressionEvaluator.Context {
    var vars: [String: String]
    var workflowName: String
    /// Parameters of the enclosing action invocation; a nil value is not known statically.
    var params: [String: String?] = [:]
    var env: [EnvVar] = []

    func value(of path: [String]) -> ExpressionValue? {
        guard path.count == 2 else { return nil }
        switch path[0] {
        case "vars": return vars[path[1]].map(ExpressionValue.string)
        case "workflow": return path[1] == "name" ? .string(workflowName) : nil
        case "params":
            guard let known = params[path[1]], let value = known else { return nil }
            return .string(value)
        case "env":
            guard let variable = env.last(where: { $0.name.value == path[1] }) else { return nil }
            var outer = self
            outer.env = []
            return outer.text(of: variable.value).map(ExpressionValue.string)
        default: return nil
        }
    }

    func status(_ function: String) -> Bool? { nil }

    /// The template's text when every expression in it is known here, else nil.
    func text(of template: Template) -> String? {
        ExpressionEvaluator.isResolvable(template, in: self) ? ExpressionEvaluator.render(template, in: self) : nil
    }

    /// The context for the steps of an action invoked with `with`.
    func entering(_ with: [(name: String, value: Template)]) -> StaticContext {
        var inner = self
        inner.params = [:]
        for (name, value) in with {
            inner.params[name] = .some(text(of: value))
        }
        return inner
    }
}
