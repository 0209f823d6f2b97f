/// One node of a YAML document: a scalar, a sequence or a mapping, with its source span.
///
/// Nodes live in a `YAMLDocument` arena and refer to their children by index, so a
/// 100,000-step file builds without an allocation per node.
public struct YAMLNode: Sendable {
    /// The shape of a node.
    public enum Kind: UInt8, Sendable {
        case scalar
        case sequence
        case mapping
    }

    /// How a scalar was written; quoted scalars are always strings.
    public enum Style: UInt8, Sendable {
        case plain
        case singleQuoted
        case doubleQuoted
        case literal
        case folded
        /// Collections: `[…]` / `{…}` versus indentation.
        case flow
        case block
    }

    public var kind: Kind
    public var style: Style
    public var span: SourceSpan
    /// The scalar's text (empty for collections).
    public var value: String
    /// An explicit tag, e.g. `tag:yaml.org,2002:str` for `!!str`.
    public var tag: String?
    /// Children (items of a sequence, or alternating key and value of a mapping) are
    /// `document.children[childStart ..< childStart + childCount]`: one flat array for the
    /// whole document, so building and freeing it costs no allocation per node.
    public var childStart: Int32 = 0
    public var childCount: Int32 = 0

    /// Whether this scalar is a YAML null (`~`, `null`, or nothing at all).
    public var isNull: Bool {
        guard kind == .scalar, style == .plain, tag == nil else { return false }
        // By length first: asked of most nodes, and most are no null.
        switch value.utf8.count {
        case 0: return true
        case 1: return value == "~"
        case 4: return value == "null" || value == "Null" || value == "NULL"
        default: return false
        }
    }

    /// Whether the scalar is plain, i.e. may be typed as a bool or number.
    public var isPlainScalar: Bool { kind == .scalar && style == .plain && tag == nil }

    /// The boolean a plain scalar spells, if any (YAML 1.2 core schema).
    public var boolValue: Bool? {
        guard isPlainScalar, value.utf8.count == 4 || value.utf8.count == 5 else { return nil }
        switch value {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default: return nil
        }
    }

    /// The integer a plain scalar spells, if any.
    public var intValue: Int? {
        guard isPlainScalar else { return nil }
        if let decimal = Int(value) { return decimal }
        // YAML 1.2 core also spells integers `0o17` and `0x1F`.
        if value.hasPrefix("0o") { return Int(value.dropFirst(2), radix: 8) }
        if value.hasPrefix("0x") { return Int(value.dropFirst(2), radix: 16) }
        return nil
    }

    /// The number a plain scalar spells, if any.
    public var doubleValue: Double? {
        guard isPlainScalar, let first = value.utf8.first,
              first == UInt8(ascii: "-") || first == UInt8(ascii: "+") || first == UInt8(ascii: ".")
                || (first >= UInt8(ascii: "0") && first <= UInt8(ascii: "9"))
        else { return nil }
        // YAML 1.2 core's infinities and not-a-number (Swift spells them without the dot).
        switch value {
        case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .infinity
        case "-.inf", "-.Inf", "-.INF": return -.infinity
        case ".nan", ".NaN", ".NAN": return .nan
        default: return Double(value)
        }
    }

    /// A short name of the node's type, for "expected a string, found a mapping".
    public var typeDescription: String {
        switch kind {
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        case .scalar:
            if isNull { return "null" }
            if boolValue != nil { return "a boolean" }
            if intValue != nil || doubleValue != nil { return "a number" }
            return "a string"
        }
    }
}
