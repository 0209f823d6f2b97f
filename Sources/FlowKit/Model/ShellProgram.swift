/// A shell that runs `shell` steps: one of the supported names, or a path to one of them.
public struct ShellProgram: Sendable, Equatable {
    /// Shells whose `-c` and `-e` semantics flow relies on.
    public static let supportedNames = ["sh", "bash", "zsh", "dash", "ksh"]

    /// What the user wrote: a name (`bash`) or a path (`/usr/local/bin/bash`).
    public var spec: String

    public init?(_ spec: String) {
        let base = spec.split(separator: "/").last.map(String.init) ?? spec
        guard Self.supportedNames.contains(base), !spec.hasSuffix("/") else { return nil }
        self.spec = spec
    }

    public static let sh = ShellProgram("sh")!

    /// The name without directories (`bash`).
    public var name: String { spec.split(separator: "/").last.map(String.init) ?? spec }
}
