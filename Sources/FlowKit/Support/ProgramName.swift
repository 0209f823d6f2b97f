#if canImport(Glibc)
import Glibc
#endif

/// How a command the user is told to paste (the resume hint) names flow itself: `flow`
/// when that is what their shell finds on `PATH`, else the path this process was started
/// by, as pip says `python -m pip` when that is how it was run. A `flow` built from source
/// and run as `.build/release/flow` is usually not on `PATH`, or an older one is, whose
/// journal format may differ.
public enum ProgramName {
    /// The name for this process, worked out on first use (a run that did not succeed,
    /// at its end): never at start-up, which the lookup's stats would slow. A command that
    /// moves into another directory (`resume`, into the run's) uses it first: relative
    /// `PATH` entries and a relative `argv[0]` are read from the directory the shell that
    /// pastes the hint is in.
    public static let current: String = {
        let argv0 = ProgramArguments.argument(0).map { String(cString: $0) } ?? ""
        return name(argv0: argv0, searchPath: getenv("PATH").map { String(cString: $0) },
                    executable: executable(link: "/proc/self/exe"))
    }()

    /// `flow` when a search of `searchPath` for it finds `executable` (symlinks resolved);
    /// else `argv0` when it names `executable`, by a path (relative ones stay relative: they
    /// are read from the directory flow was started in) or by a name `searchPath` finds
    /// (`flow-dev`, a symlink on `PATH`); else `executable` itself. `flow` when
    /// `executable` is unknown.
    public static func name(argv0: String, searchPath: String?, executable: String?) -> String {
        guard let executable else { return "flow" }
        if let found = ExecutableLookup.resolve("flow", searchPath: searchPath),
           resolvedPath(found) == executable {
            return "flow"
        }
        if argv0.utf8.contains(UInt8(ascii: "/")) {
            if resolvedPath(argv0) == executable { return argv0 }
        } else if let found = ExecutableLookup.resolve(argv0, searchPath: searchPath), resolvedPath(found) == executable {
            return argv0
        }
        return executable
    }

    /// The file `link` (`/proc/self/exe`) names, symlinks resolved. A binary replaced while
    /// it ran (`swift build` in another terminal, a package upgrade) reads `PATH (deleted)`
    /// there: then the file now at PATH, which is what the same command starts.
    static func executable(link: String) -> String? {
        if let resolved = resolvedPath(link) { return resolved }
        var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink(link, &target, target.count - 1)
        guard length > 0 else { return nil }
        let path = String(decoding: target[..<length].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let suffix = " (deleted)"
        guard path.hasSuffix(suffix) else { return nil }
        return resolvedPath(String(path.dropLast(suffix.utf8.count)))
    }

    /// `path` with every symlink and `..` resolved, or nil when it does not exist.
    static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
