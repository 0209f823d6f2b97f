#if canImport(Glibc)
import Glibc
#endif
import CFlowSys

/// The arguments flow was started with, program name first, as C strings.
///
/// Why not `CommandLine` alone: on Linux the Swift runtime reads them from
/// `/proc/self/cmdline`, and where `/proc` is not mounted (a chroot, a bubblewrap sandbox
/// without `--proc`) it has none; every command of flow then died on a range check before
/// it could say a word. The C runtime's own `argv`, kept at start-up, does not depend on it.
public enum ProgramArguments {
    /// How many there are, the program name included.
    public static var count: Int {
        let kept = Int(cflow_argc())
        return kept > 0 ? kept : Int(CommandLine.argc)
    }

    /// The argument at `index` (0: the program name), or nil past the end.
    public static func argument(_ index: Int) -> UnsafeMutablePointer<CChar>? {
        guard index >= 0, index < count else { return nil }
        if cflow_argc() > 0, let argv = cflow_argv() { return argv[index] }
        return CommandLine.unsafeArgv[index]
    }
}
