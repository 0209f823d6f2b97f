#if canImport(Glibc)
import Glibc
#endif

/// What flow takes the terminal `TERM` names to be capable of.
public enum TerminalType {
    /// Whether `TERM` says the terminal can neither move the cursor nor show colour:
    /// `dumb` (Emacs' shell buffers, some CI agents' pseudo-terminals), or no `TERM` at all,
    /// unset or empty (a cron job, `env -i`, a service manager's unit), which git, less and
    /// ncurses take as dumb too. There flow draws no live tree and writes no colour.
    public static var isDumb: Bool {
        guard let value = getenv("TERM"), value.pointee != 0 else { return true }
        return String(cString: value) == "dumb"
    }
}
