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
        if argument.hasPrefix("=") { return "the name before '=' is missing" }
        // `--var version:1.2` (YAML's, or a Compose file's `key: value`): name the `=`
        // rather than suggest `version:1.2=prod`.
        if let colon = argument.firstIndex(of: ":"), colon != argument.startIndex {
            return "expected name=value, such as \(argument[..<colon])=\(argument[argument.index(after: colon)...].drop { $0 == " " })"
        }
        return "expected name=value, such as \(argument.isEmpty ? "target" : argument)=prod"
    }
}
