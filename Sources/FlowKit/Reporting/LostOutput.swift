#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// The first write of flow's own output that stdout or stderr refused, so that the run can
/// say so at its end: a full disk (`flow run … > /dev/full`, a log on a full filesystem)
/// took the lines without a word, and flow exited 0 as if they had been written.
///
/// A closed pipe (EPIPE: `flow run … | head -1`) is not recorded: the reader chose to stop
/// reading, and the run goes on without it, as documented.
public final class LostOutput: Sendable {
    public static let shared = LostOutput()

    /// errno of the first refused write, per descriptor (1 and 2).
    private let failures = Mutex<[Int32: Int32]>([:])

    /// Notes that a write to `fd` failed with `code` (errno).
    public func record(fd: Int32, errno code: Int32) {
        guard code != EPIPE else { return }
        failures.withLock { if $0[fd] == nil { $0[fd] = code } }
    }

    /// Why `fd` first refused a write (not a closed pipe), or nil if it took everything.
    public func failure(fd: Int32) -> String? {
        failures.withLock { $0[fd] }.map(SpawnError.message)
    }

    /// The warning for the end of the run, one line per stream that refused output, or nil
    /// if everything was written (or only a closed pipe refused it). `logsHint`, when the
    /// run is recorded, tells where the lines can still be read.
    public func warning(logsHint: String?) -> String? {
        let seen = failures.withLock { $0 }
        guard !seen.isEmpty else { return nil }
        var text = ""
        for fd in seen.keys.sorted() {
            let name = fd == 1 ? "stdout" : fd == 2 ? "stderr" : "descriptor \(fd)"
            let reason = SpawnError.message(seen[fd] ?? 0)
            text += "warning: flow could not write all of its output to \(name) (\(reason))"
            text += logsHint.map { "; \($0) shows it" } ?? ""
            text += "\n"
        }
        return text
    }
}
