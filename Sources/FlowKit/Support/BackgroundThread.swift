#if canImport(Glibc)
import Glibc
#endif

/// A detached thread of flow's own, for work that must not wait for (or hold) a thread of
/// the Swift concurrency pool: the process hub's event loop, opening the journal.
public enum BackgroundThread {
    /// Runs `body` on a new detached thread, which starts with the calling thread's signal
    /// mask. Returns false (and does not run `body`) if no thread could be made.
    @discardableResult
    public static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        final class Box {
            let body: @Sendable () -> Void
            init(_ body: @escaping @Sendable () -> Void) { self.body = body }
        }
        let context = Unmanaged.passRetained(Box(body)).toOpaque()
        var thread = pthread_t()
        let rc = pthread_create(&thread, nil, { context in
            Unmanaged<Box>.fromOpaque(context!).takeRetainedValue().body()
            return nil
        }, context)
        guard rc == 0 else {
            Unmanaged<Box>.fromOpaque(context).release()
            return false
        }
        pthread_detach(thread)
        return true
    }
}
