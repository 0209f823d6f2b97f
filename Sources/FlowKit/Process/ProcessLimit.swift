#if canImport(Glibc)
import Glibc
#endif

/// The per-user limit on processes and threads (RLIMIT_NPROC, `ulimit -u`), which the
/// kernel checks at every thread flow makes as at every step it starts.
///
/// Why it is checked at start: Swift's concurrency runtime gets its threads from
/// libdispatch, which, refused one (EAGAIN), sleeps and asks again for ever. Under a
/// `ulimit -u` the user's processes already fill, every command of flow hung without a
/// word (`flow validate` too), or died on a failed precondition with a backtrace.
public enum ProcessLimit {
    /// Threads and processes flow needs free to do anything: its own threads (the main
    /// one, the process hub's, the journal's, the runtime's pool) and a step or two.
    public static let minimumFree = 16

    /// The limit and how many of the user's processes and threads there are, when fewer
    /// than `minimumFree` are left; nil when enough are, or the limit does not apply.
    public static func shortage() -> (limit: Int, used: Int)? {
        let resource = Int32(__RLIMIT_NPROC.rawValue)
        var limit = rlimit()
        // The soft limit as it is: raised, the steps would inherit the raise (the limit a
        // user sets against a fork bomb in a build would no longer hold there).
        guard getrlimit(resource, &limit) == 0 else { return nil }
        // The kernel does not hold root to it.
        guard limit.rlim_cur != rlim_t.max, getuid() != 0 else { return nil }
        let cap = Int(clamping: limit.rlim_cur)
        // Every task on the system, from one small file: when even all of them leave
        // enough free, the user's own need not be counted (the common case costs one read).
        if let total = systemTasks(), total + minimumFree <= cap { return nil }
        let used = userTasks(uid: getuid())
        return used + minimumFree > cap ? (cap, used) : nil
    }

    /// The number of tasks on the system (`/proc/loadavg`'s fourth field, after the slash).
    static func systemTasks() -> Int? {
        guard let text = readSmallFile("/proc/loadavg") else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 3, let slash = fields[3].firstIndex(of: "/") else { return nil }
        return Int(fields[3][fields[3].index(after: slash)...])
    }

    /// The tasks (threads) of processes whose real uid is `uid`, as the kernel counts them
    /// against the limit, from `/proc/PID/status`.
    static func userTasks(uid: uid_t) -> Int {
        guard let dir = opendir("/proc") else { return 0 }
        defer { closedir(dir) }
        var count = 0
        while let entry = readdir(dir) {
            let name = String(decoding: DirectoryEntry.name(entry), as: UTF8.self)
            guard name.first?.isNumber == true, let status = readSmallFile("/proc/\(name)/status") else { continue }
            var realUID: uid_t?
            var threads = 1
            for line in status.split(separator: "\n") {
                if line.hasPrefix("Uid:") {
                    realUID = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first.flatMap { uid_t($0) }
                } else if line.hasPrefix("Threads:") {
                    threads = line.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst().first.flatMap { Int($0) } ?? 1
                }
            }
            if realUID == uid { count += threads }
        }
        return count
    }

    /// The text of a small file in `/proc` (up to 4 KiB), or nil.
    static func readSmallFile(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { return nil }
        return String(decoding: buffer[..<n], as: UTF8.self)
    }
}
