import CFlowSys
import Dispatch
import Synchronization

/// Where flow's own dispatch work runs (a signal's handlers, the process guard's start):
/// libdispatch's global queue, unless libdispatch cannot watch its worker pool in this
/// process.
///
/// libdispatch reads `/proc/TID/stat` of each worker of a global queue every second while
/// work waits there, and kills the process (SIGILL) when it cannot open it: without a
/// `/proc` of its own (a chroot, bubblewrap without `--proc`), about one `flow run` in five
/// died so at random. There, Swift concurrency's jobs go to the overcommit pool, which is
/// not watched (`cflow_keep_jobs_off_watched_pool`, installed by the executable), and so
/// does flow's own work: each caller gets a serial queue of its own, which runs there.
public enum DispatchPool {
    /// Whether libdispatch can watch the global queues' workers (`cflow_pool_can_watch_workers`),
    /// asked once.
    public static let isWatchable = cflow_pool_can_watch_workers() != 0

    /// The global queue of `qos`, or, where the pool cannot be watched, a new serial queue
    /// named `label` (a caller that may block keeps its own thread, as on the global queue).
    public static func queue(_ label: String, qos: DispatchQoS.QoSClass = .default) -> DispatchQueue {
        isWatchable ? .global(qos: qos) : DispatchQueue(label: label)
    }
}

extension DispatchPool {
    /// `Task.sleep(for:)`, or, where the pool cannot be watched, a sleep on a timer of
    /// libdispatch's unwatched pool: Swift 6.3's `Task.sleep` hands its wake-up to the
    /// default executor's Swift code, which enqueues it on the global queue directly (the
    /// runtime's enqueue hooks never see it). Throws `CancellationError` when the task is
    /// cancelled, as `Task.sleep` does.
    @inline(never)
    public static func sleep(for duration: Duration) async throws {
        if isWatchable { return try await Task.sleep(for: duration) }
        try await unwatchedSleep(for: duration)
    }

    /// `duration` in whole nanoseconds for a dispatch timer, as `Task.sleep` takes any:
    /// 0 for a negative one, `Int.max` (never) past what an `Int` holds. Each step is
    /// checked: a negative one past -292 years, or one just short of 292 years with a
    /// fraction, overflowed and stopped flow.
    static func timerNanoseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return 0 }
        let (whole, overflow) = Int(seconds).multipliedReportingOverflow(by: 1_000_000_000)
        let (total, overflowAgain) = whole.addingReportingOverflow(Int(attoseconds / 1_000_000_000))
        return overflow || overflowAgain ? Int.max : total
    }

    /// The sleep of a process where the pool cannot be watched (see `sleep(for:)`).
    private static func unwatchedSleep(for duration: Duration) async throws {
        /// The sleeper's continuation until the timer or a cancellation takes it, whichever
        /// comes first; `cancelled` when the cancellation came before the continuation.
        struct Waiting: ~Copyable {
            var continuation: CheckedContinuation<Void, any Error>?
            var cancelled = false
        }
        let waiting = Mutex(Waiting())
        let timer = queue("flow.sleep")
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let cancelled = waiting.withLock { w -> Bool in
                    if w.cancelled { return true }
                    w.continuation = continuation
                    return false
                }
                if cancelled { return continuation.resume(throwing: CancellationError()) }
                timer.asyncAfter(deadline: .now() + .nanoseconds(timerNanoseconds(duration))) {
                    waiting.withLock { w in w.continuation.take() }?.resume()
                }
            }
        } onCancel: {
            waiting.withLock { w in
                w.cancelled = true
                return w.continuation.take()
            }?.resume(throwing: CancellationError())
        }
    }
}
