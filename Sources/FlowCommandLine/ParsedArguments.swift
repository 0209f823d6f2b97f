/// The options and positional arguments given to one command, checked against its spec:
/// every option is known, every value is where it belongs, choices are among the allowed.
/// Typed reads (`value(_:as:)`) report a value that does not convert as a usage error.
public struct ParsedArguments: Sendable {
    /// The command, the root first.
    public let path: [CommandSpec]
    var flags: Set<String> = []
    var optionValues: [String: [String]] = [:]
    var positionalValues: [String: [String]] = [:]

    init(path: [CommandSpec]) {
        self.path = path
    }

    public var command: CommandSpec { path[path.count - 1] }

    /// Whether the flag `--long` was given.
    public func flag(_ long: String) -> Bool {
        flags.contains(long)
    }

    /// The value of `--long` (the last one given).
    public func value(_ long: String) -> String? {
        optionValues[long]?.last
    }

    /// Every value of `--long`, in order (of a single-value option too: `value` takes the last).
    public func values(_ long: String) -> [String] {
        optionValues[long] ?? []
    }

    /// The positional argument `name`.
    public func argument(_ name: String) -> String? {
        positionalValues[name]?.first
    }

    /// Every value of a repeating positional argument.
    public func arguments(_ name: String) -> [String] {
        positionalValues[name] ?? []
    }

    /// The value of `--long` converted to `T`.
    public func value<T: ArgumentValue>(_ long: String, as type: T.Type) throws(UsageError) -> T? {
        guard let text = value(long) else { return nil }
        return try convert(text, long: long)
    }

    /// Every value of a repeatable `--long`, converted to `T`.
    public func values<T: ArgumentValue>(_ long: String, as type: T.Type) throws(UsageError) -> [T] {
        var result: [T] = []
        for text in values(long) { result.append(try convert(text, long: long)) }
        return result
    }

    /// A usage error about this command (`--max-parallel must be 1 or more`).
    public func error(_ message: String) -> UsageError {
        UsageError(message, path: path)
    }

    private func convert<T: ArgumentValue>(_ text: String, long: String) throws(UsageError) -> T {
        if let value = T(argument: text) { return value }
        let option = command.option(long)
        let label = option?.synopsis ?? "--\(long)"
        let why = T.whyInvalid(text).map { ": " + $0 } ?? ""
        throw UsageError("The value '\(text)' is invalid for '\(label)'\(why)", path: path,
                         subject: option.map { ($0.synopsis, $0.help) })
    }
}
