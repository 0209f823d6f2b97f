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
            return Self.decimal(n)
        }
    }

    /// `n` (not whole) as JavaScript writes it: plain decimals down to 0.000001 (`0.00001`,
    /// not Swift's `1e-05`), an exponent below that (`1e-7`) and for huge ones (`1.5e+300`).
    static func decimal(_ n: Double) -> String {
        let text = String(n)
        guard let e = text.firstIndex(of: "e"), let exponent = Int(text[text.index(after: e)...]) else { return text }
        let negative = text.hasPrefix("-")
        let mantissa = text[text.index(text.startIndex, offsetBy: negative ? 1 : 0)..<e]
        let digits = mantissa.filter { $0 != "." }
        let trimmed = digits.hasSuffix("0") && digits.count > 1 ? String(digits.reversed().drop { $0 == "0" }.reversed()) : digits
        let sign = negative ? "-" : ""
        if exponent < 0, exponent >= -6 {
            return sign + "0." + String(repeating: "0", count: -exponent - 1) + trimmed
        }
        return sign + String(trimmed.first!) + (trimmed.count > 1 ? "." + trimmed.dropFirst() : "") + (exponent > 0 ? "e+" : "e") + String(exponent)
    }

    /// Loose equality, as GitHub Actions users expect: strings compare case-sensitively;
    /// a number and a string compare as numbers when the string is numeric; `null` equals `''`.
    public func looselyEquals(_ other: ExpressionValue) -> Bool {
        switch (self, other) {
        // Scalar by scalar: Swift's `==` treats canonically equivalent strings as equal
        // (`é` precomposed and `e` + combining accent), which are different text to the
        // shell, to a file name and to `[ "$a" = "$b" ]`. "Identical" means the same scalars.
        case (.string(let a), .string(let b)): return a.isIdentical(to: b)
        case (.number(let a), .number(let b)): return a == b
        case (.bool(let a), .bool(let b)): return a == b
        case (.null, .null): return true
        case (.null, .string(let s)), (.string(let s), .null): return s.isEmpty
        case (.number(let n), .string(let s)), (.string(let s), .number(let n)):
            guard let parsed = Self.decimal(s.trimmingSpaces) else { return false }
            return parsed == n
        case (.bool(let b), .string(let s)), (.string(let s), .bool(let b)):
            return s == (b ? "true" : "false")
        default: return false
        }
    }

    /// The value of `text` when it is a decimal number as people and JSON write one
    /// (`42`, `-1.5`, `.5`, `1e3`, a leading `+`), else nil. `Double(_:)` alone also takes
    /// `inf`, `nan`, `infinity` and hexadecimal (`0x1p3` is 8): strings no one means as
    /// numbers, which made `'0x1p3' == 8` true.
    static func decimal(_ text: Substring) -> Double? {
        var bytes = text.utf8[...]
        if let first = bytes.first, first == UInt8(ascii: "+") || first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        func digits() -> Int {
            let count = bytes.prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }.count
            bytes = bytes.dropFirst(count)
            return count
        }
        var mantissa = digits()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            mantissa += digits()
        }
        guard mantissa > 0 else { return nil }
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            if let sign = bytes.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
            guard digits() > 0 else { return nil }
        }
        return bytes.isEmpty ? Double(text) : nil
    }
}
