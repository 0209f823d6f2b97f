#if canImport(Glibc)
import Glibc
#endif

/// The workflow files of a directory: its regular files (or links to them) named `*.yaml`
/// or `*.yml` (not hidden ones), not its subdirectories. What `flow validate DIR` checks, and what a missing
/// file's help offers.
///
/// Names are bytes throughout: a directory or file whose name is not UTF-8 is opened by
/// what it is, and only shown escaped.
public enum WorkflowDirectory {
    /// Whether `bytes` name a directory (following a link).
    public static func isDirectory(_ bytes: [UInt8]) -> Bool {
        var info = stat()
        let found = PathBytes.withCString(bytes) { $0.map { stat($0, &info) == 0 } ?? false }
        return found && (info.st_mode & S_IFMT) == S_IFDIR
    }

    /// The names (bytes, sorted) of the workflow files in the directory `bytes` (`.` when
    /// empty); nil when it cannot be opened. At most `limit` names: a hint need not read a
    /// directory of thousands to its end.
    public static func workflowNames(in bytes: [UInt8], limit: Int = .max) -> [[UInt8]]? {
        try? names(in: bytes, limit: limit)
    }

    /// `workflowNames`, with why the directory could not be opened (`strerror`'s text,
    /// taken before other code can change `errno`).
    static func names(in bytes: [UInt8], limit: Int = .max) throws(FileReader.Failure) -> [[UInt8]] {
        let opened = PathBytes.withCString(bytes.isEmpty ? Array(".".utf8) : bytes) { $0.flatMap { opendir($0) } }
        guard let dir = opened else {
            let code = errno
            throw FileReader.Failure(path: ControlEscaping.displayName(ofPathBytes: bytes), reason: String(cString: strerror(code)))
        }
        defer { closedir(dir) }
        var names: [[UInt8]] = []
        while names.count < limit, let entry = readdir(dir) {
            let name = DirectoryEntry.name(entry)
            guard isWorkflowName(name), isRegularFile(name, type: entry.pointee.d_type, in: dir) else { continue }
            names.append(name)
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// The paths (shown name, bytes) of the workflow files in the directory `bytes`, in
    /// name order; throws when it cannot be opened.
    public static func workflowPaths(in bytes: [UInt8]) throws(FileReader.Failure) -> [(path: String, bytes: [UInt8])] {
        let base = bytes.last == UInt8(ascii: "/") ? bytes : bytes + [UInt8(ascii: "/")]
        return try names(in: bytes).map { name in
            let path = base + name
            return (ControlEscaping.displayName(ofPathBytes: path), path)
        }
    }

    /// The workflow files of the directory `bytes` as a sentence's list (`` `ci/a.yaml`,
    /// `ci/b.yml` ``, at most `limit` named), each with the directory as given before it;
    /// nil when there are none. Control characters in the names are escaped here: the usage
    /// error that lists the files of the current directory keeps its own line breaks, and a
    /// name's LF (`a\nb.yaml`) broke its line there.
    public static func listing(in bytes: [UInt8], limit: Int = 5) -> String? {
        guard let names = workflowNames(in: bytes, limit: 1_000), !names.isEmpty else { return nil }
        let base = bytes.isEmpty || bytes.last == UInt8(ascii: "/") ? bytes : bytes + [UInt8(ascii: "/")]
        return Suggestion.list(names.map { ControlEscaping.escaped(ControlEscaping.displayName(ofPathBytes: base + $0)) },
                               limit: limit)
    }

    /// `*.yaml` or `*.yml`, with something before the dot, and not hidden: as a shell's
    /// `*.yaml` leaves out `.pre-commit-config.yaml`, another tool's file.
    static func isWorkflowName(_ name: [UInt8]) -> Bool {
        name.first != UInt8(ascii: ".") && [".yaml", ".yml"].contains { name.count > $0.utf8.count && name.suffix($0.utf8.count).elementsEqual($0.utf8) }
    }

    /// Whether the entry `name` of `dir` is a regular file, following a link (`d_type`
    /// says so for most file systems; others, and links, are asked with `fstatat`).
    private static func isRegularFile(_ name: [UInt8], type: UInt8, in dir: OpaquePointer) -> Bool {
        if type == UInt8(DT_REG) { return true }
        guard type == UInt8(DT_LNK) || type == UInt8(DT_UNKNOWN) else { return false }
        var info = stat()
        let found = PathBytes.withCString(name) { $0.map { fstatat(dirfd(dir), $0, &info, 0) == 0 } ?? false }
        return found && (info.st_mode & S_IFMT) == S_IFREG
    }
}
