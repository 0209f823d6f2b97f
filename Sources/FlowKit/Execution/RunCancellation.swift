import Dispatch
import Synchronization

/// The run's cancellation: which signal asked for it and how many times.
///
/// The first SIGINT/SIGTERM starts a graceful stop (no new steps; the running ones get the
/// signal once, then SIGKILL after the grace period; `finally` and rollback still run). The
/// second one kills everything at once, and so does SIGQUIT (`Ctrl-\`), first or not
/// (`requestNow`).
public final class RunCancellation: Sendable {
    private struct State {
        var signal: Int32?
        /// Takes the signals that came but were not read yet (`SignalTrap`).
        var pendingCheck: (@Sendable () -> Void)?
        var count = 0
        var handlers: [@Sendable (Int32) -> Void] = []
        /// Run in the first request's caller, before `handlers` (see `onCancelAtOnce`).
        var immediateHandlers: [@Sendable (Int32) -> Void] = []
        var repeatHandler: (@Sendable (Int32) -> Void)?
        /// The first request's handlers have all run.
        var handled = false
    }

    private let state = Mutex(State())
    /// The first request's handlers while they run (see `handlersFinished`).
    private let handling = DispatchGroup()

    public init() {}

    /// Records a request; returns how many requests there have been (1 for the first).
    /// The first request's handlers run on `queue`, not in the caller: one of them may
    /// wait (saying so on a terminal or pipe that is not being read), and the caller must
    /// stay free to take the second request.
    ///
    /// A later request runs the repeat handler (see `onRepeat`): in the caller by default,
    /// as the signal trap wants it, or on `repeatOn`.
    @discardableResult
    public func request(_ signal: Int32, handlersOn queue: DispatchQueue = DispatchPool.queue("flow.signal-handlers"), repeatOn repeatQueue: DispatchQueue? = nil) -> Int {
        typealias Handlers = [@Sendable (Int32) -> Void]
        let (count, immediate, handlers, repeatHandler) = state.withLock { s -> (Int, Handlers, Handlers, (@Sendable (Int32) -> Void)?) in
            if s.signal == nil { s.signal = signal }
            s.count += 1
            // Counted as pending under the lock: the run's end, which sees the signal
            // once the lock is released, must also see its handlers pending.
            if s.count == 1, !s.handlers.isEmpty { handling.enter() }
            return (s.count, s.count == 1 ? s.immediateHandlers : [], s.count == 1 ? s.handlers : [],
                    s.count >= 2 ? s.repeatHandler : nil)
        }
        for handler in immediate { handler(signal) }
        if let repeatHandler {
            if let repeatQueue { repeatQueue.async { repeatHandler(signal) } } else { repeatHandler(signal) }
        }
        if !handlers.isEmpty {
            queue.async { [handling, self] in
                for handler in handlers { handler(signal) }
                self.state.withLock { $0.handled = true }
                handling.leave()
            }
        }
        return count
    }

    /// A request to stop now (SIGQUIT: the terminal's `Ctrl-\`): the repeat handler runs
    /// at once, whether a request came before or not; the graceful handlers do not (nothing
    /// is asked to stop politely when everything is about to be killed). The run is
    /// cancelled by `signal` unless an earlier request already named its signal.
    public func requestNow(_ signal: Int32, repeatOn repeatQueue: DispatchQueue? = nil) {
        let repeatHandler = state.withLock { s -> (@Sendable (Int32) -> Void)? in
            if s.signal == nil { s.signal = signal }
            s.count = max(s.count, 1) + 1
            return s.repeatHandler
        }
        guard let repeatHandler else { return }
        if let repeatQueue { repeatQueue.async { repeatHandler(signal) } } else { repeatHandler(signal) }
    }

    /// Waits for the repeat handler, which ends flow (it kills every step, records the run's
    /// end and exits), when there is one: the caller, which made a request that ran it on
    /// another queue, must not race it to the run's end (the run then ended as if nothing
    /// had come, and the note that the second signal killed everything was lost). Returns
    /// at once when no repeat handler is registered.
    public func awaitRepeatHandler() async {
        guard state.withLock({ $0.repeatHandler != nil }) else { return }
        // Never resumed: flow exits from the handler. Unsafe, since a checked continuation
        // that is never resumed says so on stderr.
        await withUnsafeContinuation { (_: UnsafeContinuation<Void, Never>) in }
    }

    /// Returns once the first request's handlers have run: the run's end must not overtake
    /// what they say (the note that flow heard the signal came after the summary, or not
    /// at all once the output was closed).
    public func handlersFinished() async {
        // At once when they have run: every step the run reaches after a signal asks.
        if state.withLock({ $0.handled }) { return }
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            handling.notify(queue: DispatchPool.queue("flow.signal-handled")) { done.resume() }
        }
    }

    /// Runs `handler` on the first request (at once if it already happened).
    public func onCancel(_ handler: @escaping @Sendable (Int32) -> Void) {
        register(handler, in: \.handlers)
    }

    /// Runs `handler` on the first request, in the caller, before the handlers of `onCancel`
    /// are started (at once if the request already happened). It must not block: the caller
    /// is the signal trap's reader, which must stay free to take the second request. What
    /// it does is in place before that request is taken: a second signal right behind the
    /// first (both read at once) ran the repeat handler, which closes the output, before
    /// the first one's handlers had said anything, and the note that flow heard the first
    /// was lost (about 1 run in 20).
    public func onCancelAtOnce(_ handler: @escaping @Sendable (Int32) -> Void) {
        register(handler, in: \.immediateHandlers)
    }

    /// Adds `handler` to `list`, or runs it now if the first request already came.
    private func register(_ handler: @escaping @Sendable (Int32) -> Void, in list: WritableKeyPath<State, [@Sendable (Int32) -> Void]>) {
        let fired: Int32? = state.withLock { s in
            if let signal = s.signal { return signal }
            s[keyPath: list].append(handler)
            return nil
        }
        if let fired { handler(fired) }
    }

    /// Runs `handler` on every request after the first (what a second Ctrl-C does: the
    /// signal trap's "kill everything now"), whoever makes it: the trap, or the executor
    /// passing on a Ctrl-C that reached an interactive step instead of flow.
    /// Runs `check` from `takePendingSignals`.
    public func onPendingCheck(_ check: @escaping @Sendable () -> Void) {
        state.withLock { $0.pendingCheck = check }
    }

    /// Takes the signals that came but were not read yet, so that `isCancelled` says
    /// whether one came by now: called where the run decides how it ended.
    public func takePendingSignals() {
        state.withLock { $0.pendingCheck }?()
    }

    public func onRepeat(_ handler: @escaping @Sendable (Int32) -> Void) {
        state.withLock { $0.repeatHandler = handler }
    }

    public var signal: Int32? { state.withLock { $0.signal } }
    public var isCancelled: Bool { signal != nil }
    /// A second request came: every step is being killed at once.
    public var killsEverything: Bool { state.withLock { $0.count >= 2 } }
    /// How many signals have been requested so far.
    public var requests: Int { state.withLock { $0.count } }
}
