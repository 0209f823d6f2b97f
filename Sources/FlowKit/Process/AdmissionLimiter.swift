import Synchronization

/// A counting semaphore for Swift concurrency: bounds how many tasks are inside a region
/// at once (e.g. concurrent children under the descriptor limit, or `max_parallel`).
///
/// Waiters are admitted first come, first served. Waiting is cancellable: a cancelled
/// waiter throws `CancellationError` and takes no permit.
public final class AdmissionLimiter: Sendable {
    private struct Waiter {
        let id: UInt64
        let continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var available: Int
        var waiters: [Waiter] = []
        var nextID: UInt64 = 0
    }

    private let state: Mutex<State>

    /// A limiter admitting `permits` holders at once (at least 1).
    public init(permits: Int) {
        state = Mutex(State(available: max(1, permits)))
    }

    /// Permits free right now.
    public var availablePermits: Int { state.withLock { $0.available } }

    /// Takes a permit without waiting; false if none is free.
    public func tryAcquire() -> Bool {
        state.withLock { state in
            // Waiters come first: a new arrival never overtakes them.
            guard state.available > 0, state.waiters.isEmpty else { return false }
            state.available -= 1
            return true
        }
    }

    /// Waits for a permit. Throws `CancellationError` if the task is cancelled first.
    public func acquire() async throws {
        // Fast path without a suspension point (a free permit is the common case).
        try Task.checkCancellation()
        if tryAcquire() { return }
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome: Result<Void, any Error>? = state.withLock { state in
                    // Checked under the lock: a cancellation that ran before we queued up
                    // is seen here; one that runs after will find us in the queue.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    if state.available > 0 && state.waiters.isEmpty {
                        state.available -= 1
                        return .success(())
                    }
                    state.waiters.append(Waiter(id: id, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let i = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: i)
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Returns a permit, admitting the longest waiter if there is one.
    public func release() {
        let next = state.withLock { state -> Waiter? in
            if state.waiters.isEmpty {
                state.available += 1
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.continuation.resume()
    }

    /// Runs `body` holding a permit, released however `body` ends.
    public func withPermit<T: Sendable>(_ body: () async throws -> T) async throws -> T {
        try await acquire()
        defer { release() }
        return try await body()
    }
}
