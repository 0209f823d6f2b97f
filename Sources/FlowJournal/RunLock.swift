#if canImport(Glibc)
import Glibc
#endif

/// A lock file held by the process running a run. The kernel drops it when the process dies
/// (even by SIGKILL), which is how a dead run is told from a live one without guessing.
public final class RunLock: @unchecked Sendable {
    let fd: Int32

    /// Takes the lock for `runID` (fails only if the file cannot be made).
    public init?(stateDir: String, runID: String) {
        let path = Self.path(stateDir: stateDir, runID: runID)
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0, flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            if fd >= 0 { close(fd) }
            return nil
        }
        self.fd = fd
    }

    static func path(stateDir: String, runID: String) -> String {
        "\(stateDir)/locks/\(runID).lock"
    }

    /// Whether some live process holds the lock of `runID`.
    public static func isHeld(stateDir: String, runID: String) -> Bool {
        let fd = open(path(stateDir: stateDir, runID: runID), O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    public func release(stateDir: String, runID: String) {
        unlink(Self.path(stateDir: stateDir, runID: runID))
        flock(fd, LOCK_UN)
        close(fd)
    }
}
