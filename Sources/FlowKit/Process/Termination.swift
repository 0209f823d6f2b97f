/// How a child process ended, as reported by `waitpid`.
public enum Termination: Sendable, Hashable, CustomStringConvertible {
    /// Normal exit with this status (0...255).
    case exited(Int32)
    /// Killed by this signal number.
    case signaled(Int32)

    /// Whether the child exited with status 0.
    public var isSuccess: Bool { self == .exited(0) }

    /// The status a POSIX shell would report in `$?`: the code, or 128 + the signal.
    public var shellStatus: Int32 {
        switch self {
        case .exited(let code): return code
        case .signaled(let signal): return 128 + signal
        }
    }

    public var description: String {
        switch self {
        case .exited(let code): return "exited with status \(code)"
        case .signaled(let signal): return "killed by signal \(signal)"
        }
    }
}
