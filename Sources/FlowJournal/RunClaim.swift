#if canImport(Glibc)
import Glibc
#endif

/// A recorded run taken by the `resume` or `undo` of it that is going on: a lock file the
/// kernel drops when that process ends (even by SIGKILL).
///
/// Two at once would both run the steps: two `flow undo` of one run rolled it back twice
/// (both had checked that no undo had succeeded yet, before either had). The holder keeps
/// the claim until it exits; the next `flow` that opens the journal removes claim files
/// nobody holds (`Journal.recover`).
public final class RunClaim: @unchecked Sendable {
    /// What taking a claim came to.
    public enum Outcome: Sendable {
        case taken(RunClaim)
        /// Another live process holds it.
        case held
        /// The file cannot be made (a read-only state dir): nothing to coordinate through.
        case unavailable
    }

    /// Not closed by a `resume` or `undo`: the lock lasts as long as the process. A prune
    /// gives its claims back (`release`) once the runs are deleted.
    let fd: Int32

    private init(fd: Int32) {
        self.fd = fd
    }

    static func path(stateDir: String, runID: String) -> String {
        "\(stateDir)/locks/\(runID).claim"
    }

    /// Takes the claim on `runID` without waiting.
    public static func take(stateDir: String, runID: String) -> Outcome {
        let path = path(stateDir: stateDir, runID: runID)
        // A claim file removed (by `recover`) between our open and our lock is not the one
        // at the path any more: another process may have made and taken a new one. So the
        // lock counts only on the file still at the path.
        for _ in 0..<8 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return .unavailable }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
                let busy = errno == EWOULDBLOCK
                close(fd)
                return busy ? .held : .unavailable
            }
            var opened = stat(), current = stat()
            if fstat(fd, &opened) == 0, stat(path, &current) == 0, opened.st_ino == current.st_ino, opened.st_dev == current.st_dev {
                return .taken(RunClaim(fd: fd))
            }
            close(fd)
        }
        return .unavailable
    }

    /// Removes the claim file and lets go of it: the run it claimed is deleted (`--prune`).
    func release(stateDir: String, runID: String) {
        unlink(Self.path(stateDir: stateDir, runID: runID))
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// Removes the claim file at `path` if no process holds it.
    static func removeIfFree(_ path: String) {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        if flock(fd, LOCK_EX | LOCK_NB) == 0 { unlink(path) }
    }
}
