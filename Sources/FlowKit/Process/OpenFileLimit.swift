#if canImport(Glibc)
import Glibc
#endif
import CFlowSys

/// The process's open-descriptor limit (RLIMIT_NOFILE), which bounds how many children
/// can run at once: each captured child holds about 3 descriptors in flow (two pipes and
/// a pidfd; 4 while stdin bytes are being fed).
public enum OpenFileLimit {
    /// Descriptors one captured child needs while it runs (stdout, stderr, pidfd, stdin).
    public static let descriptorsPerChild = 4

    /// Raises the soft limit to the hard limit (call once at start-up); returns the soft
    /// limit now in force. Where the hard limit is "unlimited", goes as high as the kernel
    /// accepts (`/proc/sys/fs/nr_open`). Steps still start with the limit flow had.
    @discardableResult
    public static func raiseToHardLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            // Steps get the limit flow was started with, not this raise (found by the
            // hostile-environment audit: they inherited it).
            cflow_restore_open_file_limit_in_children(UInt64(limit.rlim_cur), UInt64(limit.rlim_max))
            var wanted = limit
            wanted.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &wanted) != 0 && limit.rlim_max == rlim_t.max {
                wanted.rlim_cur = rlim_t(kernelMaximum())
                _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &wanted)
            }
        }
        return current
    }

    /// The soft limit in force.
    public static var current: Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        return limit.rlim_cur == rlim_t.max ? Int.max : Int(clamping: limit.rlim_cur)
    }

    /// How many descriptors beyond stdin, stdout and stderr the process inherited from its
    /// parent and still has open, below `limit` (one above it takes no slot flow could use).
    ///
    /// Why: a parent that leaks descriptors into flow (a shell's `exec 3<…`, a test
    /// harness) leaves fewer free than the limit says.
    public static func inheritedDescriptors(below limit: Int) -> Int {
        inheritedAtStart.count { Int($0) < limit }
    }

    /// The descriptors open at start without close-on-exec, beyond 0, 1 and 2, listed in
    /// `/proc/self/fd` (none where that cannot be read). `main` reads it first, before any
    /// other code of flow runs.
    ///
    /// They are told from flow's own (the runtime's event descriptors, made before `main`)
    /// by their close-on-exec flag: flow sets it on every descriptor it makes, and none that
    /// survived the `exec` has it. Why at start: later, another thread may hold a
    /// descriptor of its own without the flag for a moment (glibc reads `/proc/self/maps`
    /// so, for the main thread's stack bounds), and it was counted as inherited.
    public static let inheritedAtStart: [Int32] = {
        guard let dir = opendir("/proc/self/fd") else { return [] }
        defer { closedir(dir) }
        let own = dirfd(dir)
        var found: [Int32] = []
        while let entry = readdir(dir) {
            let name = DirectoryEntry.string(entry)
            guard let fd = Int32(name), fd > 2, fd != own else { continue }
            let flags = fcntl(fd, F_GETFD)
            if flags >= 0, flags & FD_CLOEXEC == 0 { found.append(fd) }
        }
        return found
    }()

    /// How many captured children can run at once under the current limit, keeping
    /// `reserve` descriptors for flow itself (journal, state files, terminal...).
    /// The default reserve includes the 32 write ends flow may hold for its first children
    /// (`ProcessHub.writeEndHoldingLimit`).
    public static func suggestedConcurrentChildren(reserve: Int = 96) -> Int {
        let limit = min(current, 1 << 24)
        return max(1, (limit - reserve) / descriptorsPerChild)
    }

    private static func kernelMaximum() -> Int {
        let fd = open("/proc/sys/fs/nr_open", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return 1 << 20 }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 32)
        let n = read(fd, &bytes, bytes.count)
        guard n > 0 else { return 1 << 20 }
        let text = String(decoding: bytes[0..<n], as: UTF8.self)
        return Int(text.trimmingCharacters(in: " \n")) ?? (1 << 20)
    }
}

/// Trimming without Foundation (FlowKit's process layer only needs Glibc).
private extension String {
    /// Foundation-free trim, enough for a number read from /proc.
    func trimmingCharacters(in set: String) -> String {
        let chars = Set(set)
        var s = Substring(self)
        while let c = s.first, chars.contains(c) { s.removeFirst() }
        while let c = s.last, chars.contains(c) { s.removeLast() }
        return String(s)
    }
}
