/// One parameter of an action.
public struct Param: Sendable {
    public var name: Located<String>
    public var description: Located<String>?
    public var required = false
    public var defaultValue: Located<String>?
    /// When set, the only values the parameter accepts.
    public var allowed: [Located<String>]?

    public init(name: Located<String>) {
        self.name = name
    }
}
