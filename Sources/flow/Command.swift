import FlowCommandLine

/// A subcommand of `flow`: its command line as data, built from what was parsed, then run.
protocol Command {
    static var spec: CommandSpec { get }
    /// Reads and checks the values (a value that does not convert is a usage error).
    init(_ arguments: ParsedArguments) throws(UsageError)
    func run() async throws
    /// Whether the command only reads and prints (`validate`, `plan`, `graph`, `run
    /// --dry-run`): its threads may then share glibc's main malloc arena (see `main.swift`).
    var onlyReads: Bool { get }
}

extension Command {
    var onlyReads: Bool { false }
}

/// Ends a command with this exit status (after it printed why).
struct ExitCode: Error {
    let rawValue: Int32

    init(_ rawValue: Int32) {
        self.rawValue = rawValue
    }
}
