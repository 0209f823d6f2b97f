#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A private temporary directory for one run (the `FLOW_OUTPUT` files), removed at the end.
///
/// Its name, `flow-<pid>-<run id>-XXXXXX`, says which process owns it: the directories of
/// flows that were killed (SIGKILL leaves no chance to clean up) are removed by the next
/// run's first upkeep.
///
/// Each shell step gets a new empty file. Creating one (and removing it afterwards) costs
/// ~10 µs on tmpfs (8 with `mknodat`/`unlinkat`), on the critical path of every sequential step, so the directory keeps
/// files made in advance and removes spent ones later, both in `upkeep`, which the
/// executor runs when the process hub has nothing else to do. That moment is right after a
/// spawn, on the CPU where the child is starting, so the upkeep still delays it. It runs
/// in batches, once per dozen steps rather than once per step (the system calls are the
/// same; the closures and lock round trips are not). A queue of its own was tried and
/// was slower (×1.05–1.07 on 1,000 sequential steps): its wake-ups cost more than the
/// work it took over.
final class ScratchDirectory: Sendable {
    let path: String
    /// Where the directory was made ($TMPDIR, /dev/shm or /tmp).
    let base: String
    /// The directory, open: files are made and removed relative to it (see `makeFile`).
    private let directoryFD: Int32
    /// Runs the upkeep off the critical path (the hub's `whenIdle`).
    private let scheduleIdle: @Sendable (@escaping @Sendable () -> Void) -> Void
    private let files = Mutex(Files())
    /// How many files the run can use without retries (its shell steps, `finally` and
    /// `undo` included): no more are made in advance, so a short run does not make (and
    /// remove) a dozen files it never uses. A retry makes its file on the spot.
    private let expected: Int

    private struct Files {
        /// Empty files made in advance, not yet handed out.
        var ready: [String] = []
        /// Files of finished steps, to be removed.
        var spent: [String] = []
        var made = 0
        var upkeepQueued = false
        /// Set by `remove`: no file is made after it.
        var removed = false
        var sweptStale = false
    }

    /// How many files `upkeep` keeps ready: enough for a sequence, and a burst of
    /// concurrent steps makes the rest on the spot.
    private static let readyTarget = 16
    /// An upkeep is queued when this few ready files are left, or this many spent ones
    /// wait: one pass per dozen steps rather than one per step.
    private static let lowWater = 4
    private static let spentBatch = 12
    /// Removals per upkeep pass, so that the hub is never busy with them for long.
    private static let removalsPerPass = 64

    /// Why the directory could not be made.
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    init(runID: String, expectedFiles: Int = .max,
         scheduleIdle: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) throws {
        expected = expectedFiles
        // $TMPDIR when set; else /dev/shm (memory: one file per shell step must not cost a
        // disk write), else /tmp.
        var base = getenv("TMPDIR").map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }
            ?? (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp")
        // A relative $TMPDIR is taken from flow's directory, once: each step gets its
        // `FLOW_OUTPUT` path in its environment, and a relative one pointed elsewhere from
        // a step with its own `dir` (the step failed to write its outputs). Not from a
        // directory whose name is not UTF-8: the path is a String here, U+FFFD in place of
        // the byte names no directory, and the run was refused; relative, it works for the
        // steps without a `dir`, as before.
        if !base.hasPrefix("/"), let cwd = PathBytes.currentDirectory(), let text = String(validating: cwd, as: UTF8.self) {
            base = text + (text.hasSuffix("/") ? "" : "/") + base
        }
        while base.count > 1, base.hasSuffix("/") { base.removeLast() }
        self.base = base
        var template = Array("\(base)/\(Self.namePrefix)\(getpid())-\(runID)-XXXXXX".utf8CString)
        let made = template.withUnsafeMutableBufferPointer { mkdtemp($0.baseAddress!) }
        guard made != nil else {
            throw Failure(description: "cannot create a temporary directory in \(base): \(String(cString: strerror(errno)))")
        }
        path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        // -1 if it cannot be opened (out of descriptors): full paths are used then.
        directoryFD = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        // Held for the run's life (the kernel lets go when flow ends, SIGKILL included): the
        // sign, for another flow's sweep, that this directory is live (see `removeStale`).
        if directoryFD >= 0 { _ = flock(directoryFD, LOCK_SH) }
        self.scheduleIdle = scheduleIdle
    }

    /// The path of a new empty file that no other step has had.
    func emptyFile() -> String {
        let (file, low) = files.withLock { files in
            (files.ready.popLast() ?? makeFile(&files), files.ready.count <= Self.lowWater)
        }
        if low { queueUpkeep() }
        return file
    }

    /// The step is done with `file`: it is removed later.
    func discard(_ file: String) {
        let full = files.withLock { files in
            files.spent.append(file)
            return files.spent.count >= Self.spentBatch
        }
        if full { queueUpkeep() }
    }

    /// Makes the ready files and removes spent ones (a bounded number per call).
    func upkeep() {
        let (removals, sweep) = files.withLock { files -> ([String], Bool) in
            files.upkeepQueued = false
            let sweep = !files.sweptStale
            files.sweptStale = true
            let n = min(files.spent.count, Self.removalsPerPass)
            let removals = Array(files.spent.suffix(n))
            files.spent.removeLast(n)
            while !files.removed, files.ready.count < Self.readyTarget, files.made < expected {
                files.ready.append(makeFile(&files))
            }
            return (removals, sweep)
        }
        for file in removals { removeFile(file) }
        if sweep { Self.removeStale(in: base) }
        if files.withLock({ $0.spent.count >= Self.spentBatch && !$0.removed }) { queueUpkeep() }
    }

    // Closed only here: an upkeep may still run after `remove` (it holds the directory
    // meanwhile), and a closed number could be another directory's by then.
    deinit {
        if directoryFD >= 0 { close(directoryFD) }
    }

    func remove() {
        files.withLock { $0.removed = true }
        Self.removeTree(path)
    }

    private static let namePrefix = "flow-"

    /// Removes the scratch directories in `base` whose owner (the pid in the name) is gone
    /// and that no flow holds (the lock each live one keeps on its directory).
    ///
    /// The pid alone said a live flow's directory was stale where the pid means another
    /// process: a flow in another pid namespace sharing the base (a container run with
    /// `--ipc=host`, or with `/tmp` mounted and `TMPDIR=/tmp`) saw no such pid and removed
    /// the directory of a running flow, whose next steps failed to write `FLOW_OUTPUT`
    /// ("Directory nonexistent"; reproduced with `unshare -p -f`). The lock is on the
    /// directory itself, which every pid namespace sees the same.
    ///
    /// Pid 1 (and flow's own pid) tell nothing at all: the directory of a flow that was a
    /// container's init (`flow-1-…`, with `/tmp` or `/dev/shm` shared with the host, or the
    /// next container's flow, itself pid 1) named a pid that always exists here, and was
    /// never removed. Such a directory goes once no flow holds it and it has not changed
    /// for `unlockedAge` seconds: the pid was only needed for the moment between a flow
    /// making its directory and locking it. (Any other live pid is still taken as the
    /// owner's: a flow whose directory could not be opened holds no lock on it.)
    static func removeStale(in base: String) {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        for name in entries(of: base) where name.hasPrefix(namePrefix) {
            let rest = name.dropFirst(namePrefix.count)
            guard let dash = rest.firstIndex(of: "-"), let pid = pid_t(rest[..<dash]), pid > 0 else { continue }
            let pidTellsNothing = pid == 1 || pid == getpid()
            guard pidTellsNothing || (kill(pid, 0) != 0 && errno == ESRCH) else { continue }
            let dir = "\(base)/\(name)"
            let fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            if pidTellsNothing {
                var info = stat()
                guard fstat(fd, &info) == 0, now.tv_sec - info.st_mtim.tv_sec > unlockedAge else { continue }
            }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }  // a live flow's
            removeTree(dir)
        }
    }

    /// How long (seconds) an unlocked directory named for pid 1 or flow's own pid stays: far
    /// longer than a flow takes from making its directory to locking it (microseconds).
    static let unlockedAge = 600

    /// Removes a scratch directory and what is in it. Flow makes only files there, but a
    /// step may make a directory (`mkdir "$FLOW_OUTPUT"`): left, it kept the scratch
    /// directory for good, and no later sweep removed it either.
    private static func removeTree(_ dir: String) {
        for name in entries(of: dir) {
            let path = "\(dir)/\(name)"
            if unlink(path) != 0, errno == EISDIR || errno == EPERM {
                removeTree(path)
            }
        }
        rmdir(dir)
    }

    private static func entries(of dir: String) -> [String] {
        guard let handle = opendir(dir) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = DirectoryEntry.string(entry)
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }

    /// Creates the next numbered empty file, under the lock (so `remove` cannot miss it).
    /// A failure (a full tmpfs) is not reported here: the step then writes to a path that
    /// does not exist yet, or fails to, and says so.
    ///
    /// One `mknodat` relative to the open directory, where `open` + `close` of the full
    /// path walked it from `/` and made a file description only to drop it (tmpfs on the
    /// 2-core VM: 5.6 → 3.7 µs a file; removal by `unlinkat` 4.7 → 4.3 µs).
    private func makeFile(_ files: inout Files) -> String {
        files.made += 1
        let name = "\(files.made).out"
        if directoryFD < 0 || mknodat(directoryFD, name, S_IFREG | 0o600, 0) != 0 {
            // EPERM/EINVAL: a file system that makes regular files only through open.
            let fd = open("\(path)/\(name)", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            if fd >= 0 { close(fd) }
        }
        return "\(path)/\(name)"
    }

    /// Removes a file this directory made (`file` is its full path).
    private func removeFile(_ file: String) {
        guard directoryFD >= 0, file.utf8.count > path.utf8.count + 1 else {
            unlink(file)
            return
        }
        _ = String(file.utf8.dropFirst(path.utf8.count + 1))!.withCString { unlinkat(directoryFD, $0, 0) }
    }

    private func queueUpkeep() {
        let queue = files.withLock { files -> Bool in
            if files.upkeepQueued { return false }
            files.upkeepQueued = true
            return true
        }
        if queue { scheduleIdle { [weak self] in self?.upkeep() } }
    }
}
