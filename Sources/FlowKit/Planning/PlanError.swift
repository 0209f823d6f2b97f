/// A command-line choice that does not fit the workflow (unknown `--var`, `--only`, action…).
/// These are usage errors: exit status 2, nothing runs.
public struct PlanError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var help: String?

    public init(_ message: String, help: String? = nil) {
        self.message = message
        self.help = help
    }

    public var description: String {
        help.map { "\(message) (\($0))" } ?? message
    }
}
