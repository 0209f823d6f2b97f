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

    /// Makes `group` the foreground group.
    func handOver(to group: pid_t) {
        withSIGTTOUBlocked { _ = tcsetpgrp(ttyFD, group) }
    }

    /// After a spawn: the child made its group the foreground itself, before its exec, so
    /// it never saw itself in the background. Only if that failed: hand the terminal over
    /// and wake the group, in case it stopped on SIGTTIN meanwhile. Not otherwise: by now
    /// the step may be running, and a SIGCONT would undo a Ctrl-Z the user just pressed.
    func confirm(_ group: pid_t) {
        guard tcgetpgrp(ttyFD) != group else { return }
        handOver(to: group)
        _ = kill(-group, SIGCONT)
    }

    /// Puts the previous foreground group (flow's) back, with the saved modes. With
    /// `group`, only if that group still has the terminal: after a `bg` the shell has it,
    /// and flow, in the background then, must not take it from the shell.
    func takeBack(from group: pid_t? = nil) {
        if let group, tcgetpgrp(ttyFD) != group { return }
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
