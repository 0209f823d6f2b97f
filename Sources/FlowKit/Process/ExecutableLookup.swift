#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// Finds the file to execute for a command name, the way `execvp` and shells do, but
/// through the CHILD's `PATH` (its environment is explicit and may differ from flow's).
public enum ExecutableLookup {
    /// Used when the child's environment has no `PATH` (glibc's `execvp` default, minus ".").
    public static let defaultSearchPath = "/usr/local/bin:/usr/bin:/bin"

    /// The path to execute for `name`, or nil if no executable regular file is found.
    ///
    /// A name containing `/` is returned unchanged (a relative one is then resolved by
    /// the kernel after the child's `chdir`, like in a shell). Relative `PATH` entries
    /// (and empty ones, meaning ".") are taken relative to `directory` when given, the
    /// child's working directory: the path returned is then relative to it too (`./tool`,
    /// valid after the child's `chdir`), as a shell started there would find and run it.
    public static func resolve(_ name: String, environment: [String: String], directory: String? = nil) -> String? {
        resolve(name, searchPath: environment["PATH"], directory: directory)
    }

    /// The path to execute for `name`, searched in `searchPath` (a `PATH` value; nil for
    /// none, meaning `defaultSearchPath`).
    public static func resolve(_ name: String, searchPath: @autoclosure () -> String?, directory: String? = nil) -> String? {
        guard !name.isEmpty else { return nil }
        if name.containsByte(UInt8(ascii: "/")) { return name }
        let searchPath = searchPath() ?? defaultSearchPath
        // A hit is remembered for the same name, PATH and directory, and checked again with
        // one `access` instead of a stat per PATH entry (a thousand `sleep 1` steps made
        // eight thousand stats). Like a shell's command hash, a program installed later into
        // an EARLIER PATH entry under the same name is not noticed; misses are never cached,
        // so a program installed by an earlier step is found.
        let key = CacheKey(name: name, searchPath: searchPath, directory: directory)
        if let hit = cache.withLock({ $0[key] }), access(hit.checked, X_OK) == 0 { return hit.path }
        guard let found = search(name, searchPath: searchPath, directory: directory) else { return nil }
        cache.withLock { $0[key] = found }
        return found.path
    }

    private struct CacheKey: Hashable {
        var name: String
        var searchPath: String
        var directory: String?
    }

    /// A program found: `path` to execute (in the child, after its `chdir`) and `checked`,
    /// the same file as seen from flow's own working directory.
    private struct Found {
        var path: String
        var checked: String
    }

    private static let cache = Mutex<[CacheKey: Found]>([:])

    private static func search(_ name: String, searchPath: String, directory: String?) -> Found? {
        // Split by byte: the Character-wise split cost more than the stats.
        for entry in searchPath.utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) {
            let dir = entry.isEmpty ? "." : String(decoding: entry, as: UTF8.self)
            let path = dir + "/" + name
            // Looked at from flow's directory, but exec'd from the child's: a relative entry
            // joined to a relative `directory` ("sub/./tool") named the wrong file there.
            let checked = !dir.hasPrefix("/") && directory != nil ? directory! + "/" + path : path
            if isExecutableFile(checked) { return Found(path: path, checked: checked) }
        }
        return nil
    }

    /// The first file named `name` in `searchPath` (nil: `defaultSearchPath`) that is there
    /// but may not be executed, as `search` joins it; nil when there is none. For the
    /// failure of a lookup only: bash and dash, finding no executable `name`, run such a
    /// file anyway and report "permission denied" (status 126), not "not found" (127).
    public static func unexecutable(_ name: String, searchPath: String?, directory: String? = nil) -> String? {
        guard !name.isEmpty, !name.containsByte(UInt8(ascii: "/")) else { return nil }
        for entry in (searchPath ?? defaultSearchPath).utf8.split(separator: UInt8(ascii: ":"), omittingEmptySubsequences: false) {
            let dir = entry.isEmpty ? "." : String(decoding: entry, as: UTF8.self)
            let path = dir + "/" + name
            let checked = !dir.hasPrefix("/") && directory != nil ? directory! + "/" + path : path
            var info = stat()
            if stat(checked, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(checked, X_OK) != 0 { return path }
        }
        return nil
    }

    /// A regular file we may execute (directories named like a command are skipped).
    static func isExecutableFile(_ path: String) -> Bool {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        return access(path, X_OK) == 0
    }

    /// Whether `path` names an existing directory.
    static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }
}
