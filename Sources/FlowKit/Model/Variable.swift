/// A template variable from `vars`, overridable with `--var`.
public struct Variable: Sendable {
    public var name: Located<String>
    /// The literal value (vars are not interpolated).
    public var value: Located<String>

    public init(name: Located<String>, value: Located<String>) {
        self.name = name
        self.value = value
    }
}
