#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// A task executor that runs jobs on the `ProcessHub`'s own event-loop thread (opt-in,
/// through `withTaskExecutorPreference(hub.executor) { ... }`).
///
/// Why: with the global executor, every child exit costs two thread wake-ups (the hub's
/// thread, then a pool thread to resume the awaiting task). On this executor the task is
/// resumed on the hub's thread right after the exit is handled, like a C loop blocked in
/// `waitpid`: one wake-up. That matters for long runs of short sequential steps.
///
/// Rule: jobs share the thread that reads every child's output, so they must not block
/// (no synchronous waits, no long computations); a slow job only delays output reading.
public final class HubTaskExecutor: TaskExecutor {
    private let queue = Mutex<[UnownedJob]>([])
    private let wakeFD: Int32
    /// `pthread_self()` of the loop thread, set when it starts.
    let loopThread = Atomic<UInt>(0)

    init(wakeFD: Int32) {
        self.wakeFD = wakeFD
    }

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let first = queue.withLock { queue in
            queue.append(job)
            return queue.count == 1
        }
        // The loop drains the queue after every round of events, so it only needs a
        // wake-up when it may be asleep: queue was empty and we are another thread.
        if first && pthread_self() != loopThread.load(ordering: .relaxed) {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
    }

    /// Whether jobs are waiting (the loop then polls instead of sleeping).
    var hasPendingJobs: Bool {
        queue.withLock { !$0.isEmpty }
    }

    /// Runs the jobs queued so far (not those they enqueue: the loop checks its
    /// descriptors in between, so output keeps flowing).
    func runPendingJobs() {
        var batch: [UnownedJob] = []
        queue.withLock { swap(&batch, &$0) }
        guard !batch.isEmpty else { return }
        let me = asUnownedTaskExecutor()
        for job in batch { job.runSynchronously(on: me) }
    }
}
