#if canImport(Glibc)
import Glibc
#endif
import FlowKit

/// A lock file held by the process running a run. The kernel drops it when the process dies
/// (even by SIGKILL), which is how a dead run is told from a live one without guessing.
///
/// The file is also the run's intent log: the transitions flow is about to act on but has
/// not yet committed to the database, one JSON line each (`TransitionRecord`). Appending a
/// line is one `write` (a few microseconds) where a SQLite commit is tens of them plus locks
/// (see `JournalRecorder`). The recorder empties the file after every commit; the file of a
/// run that died is folded into the database by the next `flow` that opens the journal
/// (`Journal.recover`).
public final class RunLock: @unchecked Sendable {
    let fd: Int32

    /// Takes the lock for `runID`, making its file; fails (with `errno` set) if the file
    /// cannot be made, or is there already: another run drew the same id (see `newRunID`),
    /// and waiting for its lock would hold this run's journal until that run ended. Either
    /// way the run goes on unrecorded, with a warning (see `JournalRecorder.begin`).
    public init?(stateDir: String, runID: String) {
        let path = Self.path(stateDir: stateDir, runID: runID)
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0o644)
        // Waits: the only other holders are `flow`s looking at the file for a moment
        // (`isHeld`, `Journal.recover`).
        guard fd >= 0, flock(fd, LOCK_EX) == 0 else {
            if fd >= 0 {
                // Made here (`O_EXCL`) but not locked: left, it would stay for good.
                let failure = errno
                unlink(path)
                close(fd)
                errno = failure
            }
            return nil
        }
        self.fd = fd
    }

    static func path(stateDir: String, runID: String) -> String {
        "\(stateDir)/locks/\(runID).lock"
    }

    /// Opens the lock file at `path` as it is there (`O_RDONLY` or `O_RDWR` in `access`); -1
    /// unless it is a regular file. flow makes each one a file of its own (`O_EXCL`), so
    /// anything else was put there by hand: a FIFO hung every `flow` that opened the journal
    /// (reading it, or opening it to read, waited for a writer for good), and a link to
    /// `/dev/zero` made them read it until memory ran out. Such a file is left alone, and
    /// its run reads as one whose lock nobody holds.
    static func openFile(_ path: String, _ access: Int32) -> Int32 {
        let fd = open(path, access | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW)
        guard fd >= 0 else { return -1 }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            return -1
        }
        return fd
    }

    /// The transitions in the lock file of `runID` (none if it has no file), read without
    /// taking the lock: lines are appended whole, and a line being written is not yet whole.
    static func records(stateDir: String, runID: String) -> [TransitionRecord] {
        let fd = openFile(path(stateDir: stateDir, runID: runID), O_RDONLY)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        return readAll(fd).map(TransitionRecord.parseLines) ?? []
    }

    /// The whole content of `fd` from its current offset; nil on a read error.
    static func readAll(_ fd: Int32) -> [UInt8]? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if n == 0 { return bytes }
            bytes.append(contentsOf: chunk[..<n])
        }
    }

    /// Whether some live process holds the lock of `runID`.
    public static func isHeld(stateDir: String, runID: String) -> Bool {
        // Read-only: `flock` does not care how the file was opened, and a user who may read
        // the journal but not write it (another user's runs) cannot open it for writing;
        // every live run then read as `interrupted` to them, and `logs --follow` stopped at once.
        // A shared lock is enough to tell (the run holds its lock exclusively), and where
        // `flock` is emulated with POSIX locks (NFS) an exclusive one needs write access.
        let fd = openFile(path(stateDir: stateDir, runID: runID), O_RDONLY)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 {
            flock(fd, LOCK_UN)
            return false
        }
        return errno == EWOULDBLOCK
    }

    /// Appends `text` (whole lines) in one write; false if the file refused it.
    func append(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { writeAll(fd, UnsafeRawBufferPointer($0)) }
    }

    func append(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { writeAll(fd, $0) }
    }

    /// Empties the file: what it held is in the database now.
    func clear() {
        _ = ftruncate(fd, 0)
    }

    public func release(stateDir: String, runID: String) {
        unlink(Self.path(stateDir: stateDir, runID: runID))
        flock(fd, LOCK_UN)
        close(fd)
    }

    /// Lets go of the lock but leaves the file, for a run whose end the database could not
    /// take: the transitions the file holds are the only record of them (a step that
    /// succeeded, say), and the next `flow` that opens the journal folds them in
    /// (`Journal.recover`). Removed, they were lost, and `resume` ran the step again.
    func releaseKeepingRecords() {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
