/// A command line that does not fit its command: an unknown option, a missing or invalid
/// value, an extra argument. Printed with the command's usage line; exit status 2.
public struct UsageError: Error, Sendable {
    public var message: String
    /// The command it is about: the root first (`flow`, `run`).
    public var path: [CommandSpec]
    /// `--grace <duration>` and its help, when the error is about one option or argument.
    public var subject: (label: String, help: String)?
    /// A line more about what would fit (the workflow files here, for a missing FILE).
    public var note: String?

    public init(_ message: String, path: [CommandSpec], subject: (label: String, help: String)? = nil) {
        self.message = message
        self.path = path
        self.subject = subject
    }
}
