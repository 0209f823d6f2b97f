/// A child's whole environment: a shared, already encoded base and the few variables set
/// over it for this child (a step's `FLOW_OUTPUT`, `FLOW_STEP`, its `env:`).
///
/// Reads see the overrides first. Setting a variable never copies or re-encodes the base:
/// a spawn encodes only the overrides and points at the base's strings for the rest.
public struct ChildEnvironment: Sendable, Hashable {
    /// The environment under the overrides.
    public let base: EncodedEnvironment
    /// Variables set over `base` (replacing a base variable of the same name), in the
    /// order first set. A list, not a dictionary: a step sets two or three, and hashing
    /// and growing a dictionary for them cost ~3,000 instructions per step.
    public private(set) var overrides: [(name: String, value: String)] = []
    /// Where each override is in `overrides`, once there are many (a command with
    /// thousands of `${{ }}`): looking every name up in the list made setting them
    /// quadratic (6,000 expressions: 0.8 s).
    private var positions: [String: Int]?

    /// `values` as the whole environment (encoded now: share the result between spawns).
    public init(_ values: [String: String] = [:]) {
        base = EncodedEnvironment(values)
    }

    /// `base` with nothing set over it yet.
    public init(base: EncodedEnvironment) {
        self.base = base
    }

    /// The value of `name`, as the child will see it.
    public subscript(name: String) -> String? {
        override(name) ?? base.values[name]
    }

    /// The value set over the base for `name`, if any.
    public func override(_ name: String) -> String? {
        if let positions { return positions[name].map { overrides[$0].value } }
        return overrides.first { $0.name == name }?.value
    }

    /// Sets `name` for this child, over the base's value if it has one.
    public mutating func set(_ name: String, _ value: String) {
        if let i = positions.map({ $0[name] }) ?? overrides.firstIndex(where: { $0.name == name }) {
            overrides[i].value = value
            return
        }
        if overrides.isEmpty { overrides.reserveCapacity(4) }
        overrides.append((name, value))
        if positions != nil {
            positions![name] = overrides.count - 1
        } else if overrides.count > 32 {
            positions = Dictionary(overrides.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { first, _ in first })
        }
    }

    /// Every variable the child gets, merged (for tests and diagnostics: a spawn never
    /// builds this).
    public var values: [String: String] {
        base.values.merging(overrides.map { ($0.name, $0.value) }) { _, override in override }
    }

    public static func == (lhs: ChildEnvironment, rhs: ChildEnvironment) -> Bool {
        lhs.values == rhs.values
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(values)
    }
}
