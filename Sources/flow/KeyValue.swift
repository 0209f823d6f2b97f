import FlowCommandLine

/// A `key=value` command-line argument (`--var`, `--with`).
struct KeyValue: ArgumentValue, Sendable {
    var key: String
    var value: String

    init?(argument: String) {
        guard let equals = argument.firstIndex(of: "="), equals != argument.startIndex else { return nil }
        key = String(argument[..<equals])
        value = String(argument[argument.index(after: equals)...])
    }

    static func whyInvalid(_ argument: String) -> String? {
        argument.hasPrefix("=") ? "the name before '=' is missing" : "expected name=value, such as \(argument.isEmpty ? "target" : argument)=prod"
    }
}
