/// Evaluates expressions against whatever a context can resolve.
///
/// The same evaluator serves the planner (static values only: unknown references make the
/// result unknown) and the executor (every reference known).
public struct ExpressionEvaluator {
    /// Resolves references and status functions; nil means "not known here".
    public protocol Context {
        func value(of path: [String]) -> ExpressionValue?
        func status(_ function: String) -> Bool?
    }

    public static func evaluate(_ expression: Expression, in context: some Context) -> ExpressionValue? {
        switch expression {
        case .literal(let value, _): return value
        case .reference(let path, _): return context.value(of: path.map(\.value))
        case .call(let name, _): return context.status(name.value).map(ExpressionValue.bool)
        case .not(let inner, _):
            return evaluate(inner, in: context).map { .bool(!$0.isTruthy) }
        case .binary(let op, let a, let b, _):
            switch op {
            case .and:
                guard let left = evaluate(a, in: context) else { return nil }
                return left.isTruthy ? evaluate(b, in: context) : left
            case .or:
                guard let left = evaluate(a, in: context) else { return nil }
                return left.isTruthy ? left : evaluate(b, in: context)
            case .equal, .notEqual:
                guard let left = evaluate(a, in: context), let right = evaluate(b, in: context) else { return nil }
                let equal = left.looselyEquals(right)
                return .bool(op == .equal ? equal : !equal)
            }
        }
    }

    /// The template as text; expressions the context cannot resolve stay as `${{ … }}`.
    public static func render(_ template: Template, in context: some Context) -> String {
        if template.parts.count == 1, case .text(let text) = template.parts[0] { return text }
        if template.parts.isEmpty { return "" }
        var out = ""
        for part in template.parts {
            switch part {
            case .text(let text): out += text
            case .expression(let expression, let source, _):
                if let value = evaluate(expression, in: context) {
                    out += value.description
                } else {
                    out += "${{ \(source) }}"
                }
            }
        }
        return out
    }

    /// Whether every expression of the template can be resolved in the context.
    public static func isResolvable(_ template: Template, in context: some Context) -> Bool {
        template.expressions.allSatisfy { evaluate($0, in: context) != nil }
    }
}
