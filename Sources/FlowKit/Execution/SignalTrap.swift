#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// Turns SIGINT, SIGTERM and SIGHUP into a run's cancellation (and turns on the hub's
/// job control: Ctrl-Z stops the steps with flow).
///
/// The first signal asks the run to stop gracefully; the second kills every child's
/// process group at once and exits (128 + the first signal: 130 after SIGINT, 143 after
/// SIGTERM, 129 after SIGHUP).
public final class SignalTrap: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []

    public init(cancellation: RunCancellation, hub: ProcessHub = .shared, onSecond: @escaping @Sendable (Int32) -> Void) {
        hub.enableJobControl()
        // SIGHUP (the terminal went away: an ssh session dropped, a terminal window
        // closed) is a request to stop like SIGTERM, passed on to the steps as SIGHUP;
        // unless flow was started with it ignored (nohup), which it then keeps.
        for sig in [SIGINT, SIGTERM, SIGHUP] where sig != SIGHUP || !Self.isIgnored(sig) {
            // Ignore the default action; the dispatch source still sees the signal.
            SignalDisposition.ignore(sig)
            let source = DispatchSource.makeSignalSource(signal: sig, queue: .global())
            source.setEventHandler {
                let count = cancellation.request(sig)
                if count >= 2 {
                    hub.signalAll(SIGKILL)
                    // `onSecond` ends flow with _exit, which skips the guard's own stop.
                    ProcessGuard.shared.stop()
                    onSecond(cancellation.signal ?? sig)
                }
            }
            source.resume()
            sources.append(source)
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
