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
    /// at its end): never at start-up, which the lookup's stats would slow.
    public static let current: String = {
        let argv0 = CommandLine.unsafeArgv[0].map { String(cString: $0) } ?? ""
        return name(argv0: argv0, searchPath: getenv("PATH").map { String(cString: $0) },
                    executable: resolvedPath("/proc/self/exe"))
    }()

    /// `flow` when a search of `searchPath` for it finds `executable` (symlinks resolved);
    /// else `argv0` when it names `executable` by a path (relative ones stay relative:
    /// flow never changes its working directory, so the shell that started it reads it the
    /// same); else `executable` itself. `flow` when `executable` is unknown.
    public static func name(argv0: String, searchPath: String?, executable: String?) -> String {
        guard let executable else { return "flow" }
        if let found = ExecutableLookup.resolve("flow", searchPath: searchPath),
           resolvedPath(found) == executable {
            return "flow"
        }
        if argv0.utf8.contains(UInt8(ascii: "/")), resolvedPath(argv0) == executable { return argv0 }
        return executable
    }

    /// `path` with every symlink and `..` resolved, or nil when it does not exist.
    static func resolvedPath(_ path: String) -> String? {
        guard let resolved = realpath(path, nil) else { return nil }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
