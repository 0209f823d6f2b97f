#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A recorded run taken by the `resume` or `undo` of it that is going on: a lock file the
/// kernel drops when that process ends (even by SIGKILL).
///
/// Two at once would both run the steps: two `flow undo` of one run rolled it back twice
/// (both had checked that no undo had succeeded yet, before either had). The holder keeps
/// the claim until it exits, and removes its file as it exits (`holdUntilExit`); the file
/// of one that could not (killed, or its state dir read-only by then) is removed by a later
/// `flow` that opens the journal once nobody holds it (`Journal.recover`).
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

    /// Takes the claim on `runID`; `.held` at once only when it cannot tell who holds it
    /// (see `lock`).
    public static func take(stateDir: String, runID: String) -> Outcome {
        let path = path(stateDir: stateDir, runID: runID)
        // A claim file removed (by `recover`) between our open and our lock is not the one
        // at the path any more: another process may have made and taken a new one. So the
        // lock counts only on the file still at the path. Each new round means another
        // flow removed the file meanwhile: it made progress, so this ends.
        for _ in 0..<64 {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { return .unavailable }
            switch lock(fd, path: path) {
            case .locked:
                if isFile(fd, at: path) { return .taken(RunClaim(fd: fd)) }
            case .held:
                close(fd)
                return .held
            case .failed:
                close(fd)
                return .unavailable
            case .removed:
                break
            }
            close(fd)
        }
        return .unavailable
    }

    private enum Locking { case locked, held, failed, removed }

    /// Locks the claim file open at `fd`. Another `flow` opening the journal locks a claim
    /// file for a moment to see whether it is free, and then removes it (`removeIfFree`):
    /// a lock that ends with the file gone was that one's, not a claim, and the caller
    /// opens the path again (`.removed`). Only a lock held past `tidyingWait` on the file
    /// still at the path is a claim. Refused at once, a `flow resume` or `flow undo` that
    /// came in that moment said another flow was resuming the run (found by reading
    /// `take` against `Journal.recover`: 738 false refusals in 20,000 takes beside a
    /// tidying loop).
    private static func lock(_ fd: Int32, path: String) -> Locking {
        var waited = 0
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK else { return .failed }
            guard isFile(fd, at: path) else { return .removed }
            guard waited < tidyingWait else { return .held }
            waited += 1
            usleep(1000)
        }
        return .locked
    }

    /// Milliseconds a lock may be another flow's look at the file (it takes microseconds,
    /// but that flow may be preempted meanwhile) before it counts as a claim.
    static let tidyingWait = 50

    /// Whether `fd` is open on the file now at `path`.
    private static func isFile(_ fd: Int32, at path: String) -> Bool {
        var opened = stat(), current = stat()
        return fstat(fd, &opened) == 0 && stat(path, &current) == 0
            && opened.st_ino == current.st_ino && opened.st_dev == current.st_dev
    }

    /// Removes the claim file and lets go of it: the run it claimed is deleted (`--prune`).
    func release(stateDir: String, runID: String) {
        Self.release(fd: fd, path: Self.path(stateDir: stateDir, runID: runID))
    }

    /// Unlinked before it is unlocked: a `take` waiting for the lock then finds the file
    /// gone (`.removed`) and makes a new one, never a lock on a file no longer at the path.
    private static func release(fd: Int32, path: String) {
        // Only the file this holds: the path names nothing else while the claim is held,
        // unless the state dir was moved or replaced meanwhile.
        if isFile(fd, at: path) { unlink(path) }
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// Keeps the claim for as long as the process lives, and removes its file as the
    /// process exits (`exit`, or `releaseHeldClaims` before an `_exit`). By then the
    /// command's end is in the journal, so letting go a moment before the kernel would is
    /// the same to another `flow`. Left to a later `flow`, every `resume` and `undo` left
    /// `locks/ID.claim` behind for at least `tidyingAge` seconds, and for good if no
    /// `flow` opened the journal after it.
    public func holdUntilExit(stateDir: String, runID: String) {
        // Absolute: `flow undo` (and `resume`) enter the run's recorded directory before
        // they exit, and a relative `--state-dir` (or `FLOW_STATE_DIR`) then named another
        // place: the claim file stayed behind.
        var path = Self.path(stateDir: stateDir, runID: runID)
        if !path.hasPrefix("/"), let cwd = getcwd(nil, 0) {
            path = String(cString: cwd) + "/" + path
            free(cwd)
        }
        let first = Self.heldUntilExit.withLock { held in
            held.append((fd, path))
            return held.count == 1
        }
        if first { atexit { RunClaim.releaseHeldClaims() } }
    }

    /// The claims held until the process exits (`holdUntilExit`): descriptor and path.
    private static let heldUntilExit = Mutex<[(fd: Int32, path: String)]>([])

    /// Removes the files of the claims held until exit and lets go of them; for paths that
    /// end the process with `_exit`, which runs no `atexit` handler.
    public static func releaseHeldClaims() {
        let held = heldUntilExit.withLock { held in
            defer { held = [] }
            return held
        }
        for claim in held { release(fd: claim.fd, path: claim.path) }
    }

    /// Removes the claim file at `path` if no process holds it and it was made more than
    /// `tidyingAge` seconds ago.
    ///
    /// A fresh file is left alone, unlocked: it is most likely one a `take` has just made
    /// and is about to lock. Removed under it, the `take` opened the path again, and a
    /// tidier in a loop (or several flows starting at once) could do that to it round after
    /// round until it gave up and the command went on unclaimed (2 in 20,000 takes under
    /// the full test suite's load). Now a `take` loses at most the old file it opened: the
    /// one it makes next is fresh.
    static func removeIfFree(_ path: String) {
        let fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, time(nil) - info.st_mtim.tv_sec > tidyingAge else { return }
        // Only the file still at the path: its holder may have removed it as it exited
        // (`holdUntilExit`) after this opened it, and the path may now be a `take`'s new one.
        if flock(fd, LOCK_EX | LOCK_NB) == 0, isFile(fd, at: path) { unlink(path) }
    }

    /// Seconds a claim file is left before a tidier may remove it (see `removeIfFree`).
    static let tidyingAge = 10
}
