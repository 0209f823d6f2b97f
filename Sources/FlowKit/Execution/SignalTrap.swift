#if canImport(Glibc)
import Glibc
#endif
import Dispatch

/// Turns SIGINT and SIGTERM into a run's cancellation (and turns on the hub's job
/// control: Ctrl-Z stops the steps with flow).
///
/// The first signal asks the run to stop gracefully; the second kills every child's
/// process group at once and exits (130 after SIGINT, 143 after SIGTERM).
public final class SignalTrap: @unchecked Sendable {
    private var sources: [DispatchSourceSignal] = []

    public init(cancellation: RunCancellation, hub: ProcessHub = .shared, onSecond: @escaping @Sendable (Int32) -> Void) {
        hub.enableJobControl()
        for sig in [SIGINT, SIGTERM] {
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
}
