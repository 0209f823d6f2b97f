#if canImport(Glibc)
import Glibc
#endif

/// Gives the controlling terminal's foreground to an interactive child and takes it back.
///
/// Only done when flow itself is the foreground group: a flow started in the background
/// must not steal the terminal from the shell that runs it.
struct TerminalHandoff: Sendable {
    let ttyFD: Int32
    let previousForeground: pid_t
    /// Terminal modes before the child ran, restored afterwards: a killed full-screen
    /// program would otherwise leave the terminal raw.
    let savedModes: termios?

    /// Prepares a hand-over of the terminal `ttyFD`, if flow is its foreground group (nil
    /// otherwise: no terminal, or flow runs in the background).
    static func prepare(ttyFD: Int32) -> TerminalHandoff? {
        guard ttyFD >= 0 else { return nil }
        let foreground = tcgetpgrp(ttyFD)
        guard foreground >= 0, foreground == getpgrp() else { return nil }
        var modes = termios()
        let saved: termios? = tcgetattr(ttyFD, &modes) == 0 ? modes : nil
        return TerminalHandoff(ttyFD: ttyFD, previousForeground: foreground, savedModes: saved)
    }

    /// Makes `group` the foreground group (again: the spawn's own file action normally did
    /// it before exec, so the child never sees itself in the background), then wakes it in
    /// case it stopped on SIGTTIN in between.
    func handOver(to group: pid_t) {
        withSIGTTOUBlocked { _ = tcsetpgrp(ttyFD, group) }
        _ = kill(-group, SIGCONT)
    }

    /// Puts the previous foreground group (flow's) back, with the saved modes.
    func takeBack() {
        withSIGTTOUBlocked {
            _ = tcsetpgrp(ttyFD, previousForeground)
            if var modes = savedModes { _ = tcsetattr(ttyFD, TCSADRAIN, &modes) }
        }
    }

    /// tcsetpgrp/tcsetattr from a background group raise SIGTTOU (which would stop flow)
    /// unless the signal is blocked; block it for this thread only, just around the call.
    private static func withSIGTTOUBlocked(_ body: () -> Void) {
        var block = sigset_t()
        var old = sigset_t()
        sigemptyset(&block)
        sigaddset(&block, SIGTTOU)
        pthread_sigmask(SIG_BLOCK, &block, &old)
        body()
        pthread_sigmask(SIG_SETMASK, &old, nil)
    }

    private func withSIGTTOUBlocked(_ body: () -> Void) {
        TerminalHandoff.withSIGTTOUBlocked(body)
    }
}
