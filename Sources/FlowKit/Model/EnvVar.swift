/// One environment variable given to shell steps; its value may interpolate expressions.
public struct EnvVar: Sendable {
    public var name: Located<String>
    public var value: Template

    public init(name: Located<String>, value: Template) {
        self.name = name
        self.value = value
    }
}
