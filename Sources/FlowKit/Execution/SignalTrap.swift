#if canImport(Glibc)
import Glibc
#endif
import CFlowSys
import Dispatch
import Synchronization

/// Turns SIGINT, SIGTERM, SIGHUP and SIGQUIT into a run's cancellation (and turns on the
/// hub's job control: Ctrl-Z stops the steps with flow).
///
/// The first signal asks the run to stop gracefully; the second kills every child's
/// process group at once and exits (128 + the first signal: 130 after SIGINT, 143 after
/// SIGTERM, 129 after SIGHUP). SIGQUIT (the terminal's `Ctrl-\`) kills at once, first or
/// not (131 when it is the first): the terminal's "quit now", which would otherwise end
/// flow with a core dump, leave the run `interrupted` in the journal and its steps running
/// until the guard saw flow gone.
public final class SignalTrap: @unchecked Sendable {
    private var source: DispatchSourceRead?
    private let readEnd: Int32
    private let cancellation: RunCancellation
    /// Held while signals are taken from the pipe, by its reader or by the run's end
    /// (`RunCancellation.takePendingSignals`): each in the order they came.
    private let reading = Mutex(())

    /// Why not `DispatchSource.makeSignalSource`: libdispatch installs its handler later, on
    /// its own thread, and a signal that came before (while the default action had to be
    /// set aside) was lost; under load that was after the first step had started (a CI run
    /// lost a Ctrl-C so). Here the handler is installed before `init` returns and writes
    /// the signal to a pipe, where it waits however late the pipe's reader starts.
    /// `onSecond` gets the run's signal (the exit status is 128 + it) and the one that
    /// asked to kill everything (the second signal, or SIGQUIT). It must end the process:
    /// the run's end waits for it (`RunCancellation.awaitRepeatHandler`).
    /// `closing` runs first when everything is to be killed, before anything is (see
    /// `EventBus.close`).
    public init(cancellation: RunCancellation, hub: ProcessHub = .shared, closing: @escaping @Sendable () -> Void = {},
                onSecond: @escaping @Sendable (_ runSignal: Int32, _ trigger: Int32) -> Void) {
        hub.enableJobControl()
        var ends: (Int32, Int32) = (-1, -1)
        let piped = withUnsafeMutablePointer(to: &ends) {
            $0.withMemoryRebound(to: Int32.self, capacity: 2) { cflow_pipe_cloexec($0) }
        }
        precondition(piped == 0, "flow: cannot create the signal pipe")
        let (readEnd, writeEnd) = ends
        self.readEnd = readEnd
        self.cancellation = cancellation
        _ = fcntl(readEnd, F_SETFL, O_NONBLOCK)
        // A full pipe (thousands of signals unread) drops a signal rather than block a handler.
        _ = fcntl(writeEnd, F_SETFL, O_NONBLOCK)
        // A second request, a signal or a Ctrl-C that an interactive step got in flow's
        // stead (see `Executor.runShell`), kills everything now.
        cancellation.onRepeat { sig in
            closing()
            hub.killEverything()
            // `onSecond` ends flow with _exit, which skips the guard's own stop.
            ProcessGuard.shared.stop()
            onSecond(cancellation.signal ?? sig, sig)
        }
        // SIGHUP (the terminal went away: an ssh session dropped, a terminal window
        // closed) is a request to stop like SIGTERM, passed on to the steps as SIGHUP;
        // unless flow was started with it ignored (nohup), which it then keeps. So is
        // SIGQUIT, which a shell ignores in the commands it starts in the background.
        for sig in [SIGINT, SIGTERM, SIGHUP, SIGQUIT] where sig == SIGINT || sig == SIGTERM || !Self.isIgnored(sig) {
            precondition(cflow_forward_signal(sig, writeEnd) == 0, "flow: cannot handle signal \(sig)")
        }
    }

    /// Starts reading the signals the handlers wrote to the pipe (those that came before
    /// wait there). Apart from `init` so that a caller can install the handlers first and
    /// start the reader, which wakes libdispatch's threads, once its own start-up is done:
    /// started before the executor was made, the reader made a one-step run 6–10 % slower
    /// in paired rounds (its threads starting beside the executor's and the journal's);
    /// started after, as before, the run is as quick as it was. Called once.
    public func listen() {
        let source = DispatchSource.makeReadSource(fileDescriptor: readEnd, queue: DispatchPool.queue("flow.signals"))
        source.setEventHandler { [self] in take() }
        // The run's end takes what its reader has not yet: under load the reader's thread
        // may not run for a while, and a run that ended meanwhile ended as if no signal had
        // come (an undo step's `kill -INT $PPID`, a SIGTERM during an undo: exit 0, not 130
        // or 143, now and then in full test runs).
        cancellation.onPendingCheck { [self] in take(undelivered: true) }
        source.resume()
        self.source = source
    }

    /// Takes every signal the handlers have written to the pipe so far, and (`undelivered`,
    /// at the run's end) those the kernel has for flow but no handler has run for yet.
    private func take(undelivered: Bool = false) {
        reading.withLock { _ in
            var bytes = [UInt8](repeating: 0, count: 64)
            while true {
                let count = read(readEnd, &bytes, bytes.count)
                guard count > 0 else { break }
                for byte in bytes.prefix(count) { dispatch(Int32(byte)) }
            }
            guard undelivered else { return }
            while case let sig = cflow_take_undelivered_signal(), sig > 0 { dispatch(sig) }
        }
    }

    /// One signal to the run's cancellation.
    private func dispatch(_ sig: Int32) {
        if sig == SIGQUIT {
            cancellation.requestNow(SIGQUIT)
        } else {
            cancellation.request(sig)
        }
    }

    /// Whether `sig` is ignored now (inherited from whoever started flow).
    static func isIgnored(_ sig: Int32) -> Bool {
        var current = sigaction()
        // SIG_IGN is the handler address 1 (function pointers are not Equatable in Swift).
        return sigaction(sig, nil, &current) == 0
            && unsafeBitCast(current.__sigaction_handler.sa_handler, to: Int.self) == unsafeBitCast(SIG_IGN, to: Int.self)
    }
}
