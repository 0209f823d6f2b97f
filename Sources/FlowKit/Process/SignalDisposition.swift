#if canImport(Glibc)
import Glibc
#endif
import CFlowSys

/// Changes to flow's own signal dispositions that its children must not inherit.
public enum SignalDisposition {
    /// Ignores `sig` in flow; children still get it at its default (exec would keep an
    /// ignored signal ignored, so the spawner sets it back in each child).
    public static func ignore(_ sig: Int32) {
        signal(sig, SIG_IGN)
        cflow_reset_in_children(sig)
    }

    /// Sets SIGCHLD back to its default where flow was started with it ignored. Called
    /// first thing in `main`.
    ///
    /// Why: SIGCHLD ignored (a parent's `signal(SIGCHLD, SIG_IGN)`, kept across exec) makes
    /// the kernel reap every child itself. flow then never had a step's status (ECHILD):
    /// each step failed with exit 255, however it ended. Unlike SIGINT or SIGHUP, an
    /// ignored SIGCHLD says nothing about how the user wants flow stopped; it only breaks
    /// waiting for children, which is what flow does.
    public static func restoreChildReaping() {
        guard SignalTrap.isIgnored(SIGCHLD) else { return }
        signal(SIGCHLD, SIG_DFL)
    }

    /// Until a run's `SignalTrap` takes it, SIGQUIT (the terminal's `Ctrl-\`) ends flow at
    /// once with 131, the status a run quit so ends with; unless flow was started with it
    /// ignored, which it keeps (as `SignalTrap` does). Called first thing in `main`.
    ///
    /// Why: the Swift runtime's crash handler holds SIGQUIT from the start. It printed a
    /// crash report ("Program crashed") and then let flow go on: a `Ctrl-\` while flow read
    /// and checked the workflow was lost, and the run went ahead as if none had come.
    public static func quitOnSIGQUIT() {
        guard !SignalTrap.isIgnored(SIGQUIT) else { return }
        _ = cflow_exit_on_signal(SIGQUIT)
    }
}
