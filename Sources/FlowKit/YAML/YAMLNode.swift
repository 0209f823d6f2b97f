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

    /// The core tags that type a scalar (`!!int 3`, `!!bool "true"`): an explicit tag
    /// decides the type whatever the style, as in YAML 1.2 (and PyYAML, which `flow schema`
    /// is tested with).
    static let strTag = "tag:yaml.org,2002:str"
    static let intTag = "tag:yaml.org,2002:int"
    static let floatTag = "tag:yaml.org,2002:float"
    static let boolTag = "tag:yaml.org,2002:bool"
    static let nullTag = "tag:yaml.org,2002:null"

    /// Whether the scalar's type comes from its text (plain, untagged) or from the tag `typeTag`.
    func isTyped(as typeTag: String) -> Bool {
        kind == .scalar && (tag == nil ? style == .plain : tag == typeTag)
    }

    /// Whether this scalar is a YAML null (`~`, `null`, nothing at all, or tagged `!!null`).
    public var isNull: Bool {
        guard kind == .scalar else { return false }
        if let tag { return tag == Self.nullTag }
        guard style == .plain else { return false }
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

    /// Whether the scalar is a string in the YAML 1.2 core schema: quoted, a block, tagged
    /// `!!str`, or plain and spelling no null, boolean or number. What `flow schema` calls
    /// `"type": "string"`.
    public var isString: Bool {
        guard kind == .scalar else { return false }
        if let tag { return tag == Self.strTag }
        guard style == .plain else { return true }
        return !isNull && boolValue == nil && intValue == nil && doubleValue == nil
    }

    /// The boolean a plain (or `!!bool`) scalar spells, if any (YAML 1.2 core schema).
    public var boolValue: Bool? {
        guard isTyped(as: Self.boolTag), value.utf8.count == 4 || value.utf8.count == 5 else { return nil }
        switch value {
        case "true", "True", "TRUE": return true
        case "false", "False", "FALSE": return false
        default: return nil
        }
    }

    /// The integer a plain (or `!!int`) scalar spells, if any: YAML 1.2 core's `[-+]?[0-9]+`,
    /// `0o[0-7]+` or `0x[0-9a-fA-F]+`, exactly (see `CoreNumber`).
    public var intValue: Int? {
        guard isTyped(as: Self.intTag), CoreNumber(value) == .integer else { return nil }
        if value.hasPrefix("0o") { return Int(value.dropFirst(2), radix: 8) }
        if value.hasPrefix("0x") { return Int(value.dropFirst(2), radix: 16) }
        return Int(value)
    }

    /// The number a plain (or `!!float` / `!!int`) scalar spells, if any, in YAML 1.2 core
    /// (see `CoreNumber`): Swift's `Double` alone also read `-inf`, `nan`, `infinity` and
    /// hexadecimal floats (`0x1p3`), which YAML 1.2, yaml-language-server and so `flow
    /// schema` read as strings, and not `0o10`, which they read as 8.
    public var doubleValue: Double? {
        guard isTyped(as: Self.floatTag) || isTyped(as: Self.intTag), let number = CoreNumber(value) else { return nil }
        switch number {
        case .integer:
            if let int = intValue { return Double(int) }
            // Too large for `Int`: still a number, for "too large" rather than "not a number".
            let radix = value.hasPrefix("0o") ? 8 : value.hasPrefix("0x") ? 16 : 10
            guard radix != 10 else { return Double(value) }
            return value.utf8.dropFirst(2).reduce(0.0) { $0 * Double(radix) + Double(Int(String(UnicodeScalar($1)), radix: radix)!) }
        case .float:
            switch value {
            case ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF": return .infinity
            case "-.inf", "-.Inf", "-.INF": return -.infinity
            case ".nan", ".NaN", ".NAN": return .nan
            // The rest of 1.2's float grammar is a subset of what `Double` reads.
            default: return Double(value)
            }
        }
    }

    /// A short name of the node's type, for "expected a string, found a mapping".
    public var typeDescription: String {
        switch kind {
        case .sequence: return "a list"
        case .mapping: return "a mapping"
        case .scalar:
            // A typed tag names the type even when the text does not fit it (`!!int x`).
            switch tag {
            case Self.nullTag?: return "null"
            case Self.boolTag?: return "a boolean"
            case Self.intTag?, Self.floatTag?: return "a number"
            default: break
            }
            if isNull { return "null" }
            if boolValue != nil { return "a boolean" }
            if intValue != nil || doubleValue != nil { return "a number" }
            return "a string"
        }
    }
}
