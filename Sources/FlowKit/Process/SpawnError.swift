#if canImport(Glibc)
import Glibc
#endif

/// Why a child could not be started. Nothing ran when this is thrown.
public enum SpawnError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The working directory does not exist.
    case directoryNotFound(String)
    /// The working directory exists but is not a directory (a file, say).
    case notADirectory(String)
    /// The working directory is a directory this user may not enter (no search permission).
    case directoryDenied(String)
    /// No executable of that name in the child's `PATH`, or the path does not exist.
    case executableNotFound(String)
    /// Out of file descriptors or processes (EMFILE, ENFILE, EAGAIN). Transient: queue
    /// the step and retry when another child finishes.
    case resourcesExhausted(errno: Int32)
    /// Any other failure of `posix_spawn` and friends (e.g. EACCES, ENOEXEC).
    case failed(executable: String, errno: Int32)
    /// flow is killing every step (`ProcessHub.killEverything`): nothing more starts.
    case stopping

    /// Whether retrying later may succeed (see `resourcesExhausted`).
    public var isRetryable: Bool {
        if case .resourcesExhausted = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .directoryNotFound(let dir):
            // A relative one is taken from where flow runs, not from the workflow's file (as
            // go-task takes it): say where it was looked for.
            guard !dir.hasPrefix("/"), let here = Self.currentDirectory else { return "working directory `\(dir)` does not exist" }
            return "working directory `\(dir)` does not exist (relative to \(here), where flow runs)"
        case .notADirectory(let dir):
            return "working directory `\(dir)` is not a directory"
        case .directoryDenied(let dir):
            return "working directory `\(dir)` cannot be entered: permission denied"
        case .executableNotFound(let name):
            return "command `\(name)` not found"
        case .resourcesExhausted(let code):
            // Which limit, as the user can raise it: EAGAIN alone ("resource temporarily
            // unavailable") did not say that flow had hit the per-user process limit.
            let limit = switch code {
            case EAGAIN: "the limit on this user's processes and threads (`ulimit -u`) or the system's"
            case EMFILE: "the limit on open files (`ulimit -n`)"
            default: "the system's limit on open files"
            }
            return "cannot start a process: \(SpawnError.message(code)); \(limit) is reached"
        case .failed(let executable, let code):
            return "cannot run `\(executable)`: \(SpawnError.message(code))"
        case .stopping:
            return "not started: flow is killing every step"
        }
    }

    /// flow's current directory, where a relative working directory is looked for.
    static var currentDirectory: String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The error for a working directory that cannot be entered because it is not one:
    /// a path that names nothing, or something other than a directory.
    static func unusableDirectory(_ dir: String) -> SpawnError {
        access(dir, F_OK) == 0 ? .notADirectory(dir) : .directoryNotFound(dir)
    }

    /// strerror text, lowercased to match flow's diagnostic wording.
    static func message(_ code: Int32) -> String {
        guard let text = strerror(code) else { return "error \(code)" }
        let s = String(cString: text)
        guard let first = s.first else { return s }
        return first.lowercased() + s.dropFirst()
    }

    /// Whether an errno means "out of descriptors or processes".
    static func isExhaustion(_ code: Int32) -> Bool {
        code == EMFILE || code == ENFILE || code == EAGAIN
    }
}
