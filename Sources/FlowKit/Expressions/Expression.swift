/// The syntax tree of a `${{ … }}` expression, every node with its span.
public indirect enum Expression: Sendable {
    /// A binary operator.
    public enum Operator: String, Sendable {
        case equal = "=="
        case notEqual = "!="
        case and = "&&"
        case or = "||"
    }

    case literal(ExpressionValue, SourceSpan)
    /// A dotted reference such as `steps.build.outputs.version`.
    case reference([Located<String>], SourceSpan)
    case not(Expression, SourceSpan)
    case binary(Operator, Expression, Expression, SourceSpan)
    /// A status function call: `success()`, `failure()`, `always()`, `cancelled()`.
    case call(Located<String>, SourceSpan)

    public var span: SourceSpan {
        switch self {
        case .literal(_, let s), .reference(_, let s), .not(_, let s), .binary(_, _, _, let s), .call(_, let s): return s
        }
    }

    /// The status functions the language knows.
    public static let functions = ["success", "failure", "always", "cancelled"]

    /// Every reference in the expression, in source order.
    public var references: [[Located<String>]] {
        var out: [[Located<String>]] = []
        visit { if case .reference(let path, _) = $0 { out.append(path) } }
        return out
    }

    /// Every function call in the expression.
    public var calls: [Located<String>] {
        var out: [Located<String>] = []
        visit { if case .call(let name, _) = $0 { out.append(name) } }
        return out
    }

    func visit(_ body: (Expression) -> Void) {
        body(self)
        switch self {
        case .not(let inner, _): inner.visit(body)
        case .binary(_, let a, let b, _): a.visit(body); b.visit(body)
        default: break
        }
    }

    /// Source-like text of the expression (for plans and messages).
    public var text: String {
        switch self {
        case .literal(let value, _):
            if case .string(let s) = value { return "'" + s.replacing("'", with: "''") + "'" }
            if case .null = value { return "null" }
            return value.description
        case .reference(let path, _): return path.map(\.value).joined(separator: ".")
        case .not(let inner, _):
            if case .binary = inner { return "!(\(inner.text))" }
            return "!" + inner.text
        case .binary(let op, let a, let b, _):
            return "\(parenthesised(a, inside: op, right: false)) \(op.rawValue) \(parenthesised(b, inside: op, right: true))"
        case .call(let name, _): return name.value + "()"
        }
    }

    /// Operators are left-associative, so a right operand of equal precedence needs parentheses too.
    private func parenthesised(_ e: Expression, inside op: Operator, right: Bool) -> String {
        if case .binary(let inner, _, _, _) = e,
           Expression.precedence(inner) < Expression.precedence(op) || (right && Expression.precedence(inner) == Expression.precedence(op)) {
            return "(\(e.text))"
        }
        return e.text
    }

    static func precedence(_ op: Operator) -> Int {
        switch op {
        case .or: return 1
        case .and: return 2
        case .equal, .notEqual: return 3
        }
    }
}
