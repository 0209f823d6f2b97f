/// A positional argument (`<file>`, `[<action>]`, `<files> ...`).
public struct ArgumentSpec: Sendable {
    /// The name in help (`run-id` shows as `<run-id>`); also the key its value is read by.
    public var name: String
    public var help: String
    public var isOptional: Bool
    /// Takes every remaining positional argument (at least one unless optional).
    public var repeats: Bool
    public var completion: CompletionKind

    public init(_ name: String, help: String, isOptional: Bool = false, repeats: Bool = false,
                completion: CompletionKind = .none) {
        self.name = name
        self.help = help
        self.isOptional = isOptional
        self.repeats = repeats
        self.completion = completion
    }

    /// `<files> ...` or `[<action>]`, as in the usage line.
    public var synopsis: String {
        let core = "<\(name)>" + (repeats ? " ..." : "")
        return isOptional ? "[\(core)]" : core
    }
}
