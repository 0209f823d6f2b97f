/// Everything needed to start one child process: what to run, with which environment,
/// where, and how its standard streams are wired.
///
/// The environment is complete and explicit: nothing of flow's own environment leaks in
/// unless the caller copies it here. `executable` is looked up through the `PATH` of
/// this environment (see `ExecutableLookup`) and is also passed as `argv[0]`.
public struct ChildSpec: Sendable, Hashable {
    /// A path, or a bare name searched in `environment["PATH"]`.
    public var executable: String
    /// `argv[1...]`.
    public var arguments: [String]
    /// The child's whole environment.
    public var environment: ChildEnvironment
    /// Working directory; `nil` keeps flow's.
    public var directory: String?
    /// Where standard input comes from.
    public var stdin: ChildInput
    /// Whether standard output and error are captured or passed through.
    /// `.capture` is taken as `.inherit` when `stdin` is `.terminal`.
    public var output: ChildOutputMode

    public init(
        executable: String,
        arguments: [String] = [],
        environment: ChildEnvironment,
        directory: String? = nil,
        stdin: ChildInput = .null,
        output: ChildOutputMode = .capture
    ) {
        self.executable = executable
        self.arguments = arguments
        self.environment = environment
        self.directory = directory
        self.stdin = stdin
        self.output = output
    }

    /// A child whose environment is exactly `environment` (encoded for this child alone).
    public init(
        executable: String,
        arguments: [String] = [],
        environment: [String: String] = [:],
        directory: String? = nil,
        stdin: ChildInput = .null,
        output: ChildOutputMode = .capture
    ) {
        self.init(executable: executable, arguments: arguments, environment: ChildEnvironment(environment),
                  directory: directory, stdin: stdin, output: output)
    }

    /// Whether this child takes over the terminal (interactive step).
    var isInteractive: Bool {
        if case .terminal = stdin { return true }
        return false
    }

    /// The output mode actually used: interactive children are never captured.
    var effectiveOutput: ChildOutputMode { isInteractive && output == .capture ? .inherit : output }
}
