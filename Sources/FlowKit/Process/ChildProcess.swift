#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A running (or finished) child started by `ProcessHub`, leader of its own process group.
///
/// Signalling is safe at any time: once the leader has been reaped, `signalGroup` does
/// nothing, so a recycled pid is never hit. The reap and every signal take the same lock,
/// and the leader is reaped only after its group was swept with SIGKILL.
public final class ChildProcess: Sendable {
    /// The child's pid, which is also its process-group id.
    public let pid: pid_t

    /// Mutable state shared between callers and the hub's event-loop thread.
    struct State {
        /// Set (under the lock, right after the sweep) when `waitpid` collected the leader.
        var reaped = false
        /// Set once the leader is reaped AND its output was drained (or the drain gave up).
        var termination: Termination?
        /// Whether the drain gave up because something outside the group kept a pipe open.
        var drainTimedOut = false
        var waiters: [CheckedContinuation<Termination, Never>] = []
        /// Set by `signalGroup(_:grace:)`: until then (monotonic ns), the group keeps its
        /// grace even if the leader (often a shell) has already died.
        var graceDeadline: UInt64?
    }

    let state = Mutex(State())

    /// Whether the child was given the terminal's foreground (an interactive child, with
    /// flow in the foreground): the terminal's Ctrl-C then reaches it, not flow.
    public let heldTerminal: Bool

    init(pid: pid_t, heldTerminal: Bool = false) {
        self.pid = pid
        self.heldTerminal = heldTerminal
    }

    /// The process-group id (equal to `pid`: every child leads its own group).
    public var processGroup: pid_t { pid }

    /// Sends `signal` to the child's whole process group, if the leader is not reaped yet.
    ///
    /// SIGTERM, SIGINT and SIGHUP are followed by SIGCONT: a stopped process (e.g. one that read
    /// the terminal from the background and got SIGTTIN) would otherwise not act on them
    /// until the grace period ends. Exactly-once forwarding is the caller's business.
    public func signalGroup(_ signal: Int32) {
        state.withLock { state in
            guard !state.reaped else { return }
            sendToGroup(signal)
            if signal == SIGTERM || signal == SIGINT || signal == SIGHUP {
                sendToGroup(SIGCONT)
            }
        }
    }

    /// Like `signalGroup(_:)`, and the group is given `grace` before the sweep that follows
    /// the leader's exit: when `sh -c` leads the group and dies of SIGTERM at once, the
    /// command it started still gets its grace period to clean up and print.
    public func signalGroup(_ signal: Int32, grace: Duration) {
        let nanoseconds = UInt64(max(grace.seconds, 0) * 1e9)
        state.withLock { state in
            guard !state.reaped else { return }
            state.graceDeadline = HubEventLoop.now() + nanoseconds
            sendToGroup(signal)
            if signal == SIGTERM || signal == SIGINT || signal == SIGHUP { sendToGroup(SIGCONT) }
        }
    }

    /// SIGKILLs the whole process group (no-op once the leader is reaped).
    public func kill() {
        signalGroup(SIGKILL)
    }

    /// Called with the state lock held, or from the reaper before it reaps.
    func sendToGroup(_ signal: Int32) {
        if Glibc.kill(-pid, signal) != 0 && errno == ESRCH {
            // The leader moved to another group (setpgid/setsid): reach it at least.
            _ = Glibc.kill(pid, signal)
        }
    }

    /// How the child ended; returns once the leader is reaped and all of its output has
    /// been delivered to `onOutput`. Not cancellable on purpose: to stop a child, signal
    /// it and keep awaiting, so its last output is not lost.
    public var termination: Termination {
        get async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Termination, Never>) in
                let done: Termination? = state.withLock { state in
                    if let t = state.termination { return t }
                    state.waiters.append(continuation)
                    return nil
                }
                if let done { continuation.resume(returning: done) }
            }
        }
    }

    /// The termination if already known, without waiting.
    public var currentTermination: Termination? {
        state.withLock { $0.termination }
    }

    /// Whether output capture stopped at the bounded drain instead of at end-of-file,
    /// i.e. a process that escaped the group (setsid, daemon) still held the pipe.
    public var outputDrainTimedOut: Bool {
        state.withLock { $0.drainTimedOut }
    }

    /// Records the final result and wakes every waiter (outside the lock).
    func finish(_ termination: Termination, drainTimedOut: Bool) {
        let waiters = state.withLock { state -> [CheckedContinuation<Termination, Never>] in
            state.termination = termination
            state.drainTimedOut = drainTimedOut
            let w = state.waiters
            state.waiters = []
            return w
        }
        for waiter in waiters { waiter.resume(returning: termination) }
    }
}
