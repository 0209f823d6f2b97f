/// A value an expression evaluates to.
public enum ExpressionValue: Sendable, Equatable, CustomStringConvertible {
    case string(String)
    case number(Double)
    case bool(Bool)
    case null

    /// Falsy values: `false`, `null`, `0`, and the empty string; everything else is truthy.
    public var isTruthy: Bool {
        switch self {
        case .bool(let b): return b
        case .null: return false
        case .number(let n): return n != 0 && !n.isNaN
        case .string(let s): return !s.isEmpty
        }
    }

    /// The text substituted into strings and environment variables.
    public var description: String {
        switch self {
        case .string(let s): return s
        case .bool(let b): return b ? "true" : "false"
        case .null: return ""
        case .number(let n):
            // Whole numbers as integers (`3`, not `3.0`; `9007199254740992`, not `9.007199254740992e+15`).
            if let whole = Int64(exactly: n) { return String(whole) }
            return String(n)
        }
    }

    /// Loose equality, as GitHub Actions users expect: strings compare case-sensitively;
    /// a number and a string compare as numbers when the string is numeric; `null` equals `''`.
    public func looselyEquals(_ other: ExpressionValue) -> Bool {
        switch (self, other) {
        case (.string(let a), .string(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        case (.null, .string(let s)), (.string(let s), .null): return s.isEmpty
        case (.number(let n), .string(let s)), (.string(let s), .number(let n)):
            guard let parsed = Double(s.trimmingSpaces) else { return false }
            return parsed == n
        case (.bool(let b), .string(let s)), (.string(let s), .bool(let b)):
            return s == (b ? "true" : "false")
        default: return false
        }
    }
}
