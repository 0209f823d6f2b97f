import Synchronization

/// Whether a step has failed earlier in the enclosing groups: what `success()` and
/// `failure()` look at, and why later steps of a failed sequential group are skipped.
final class FailureScope: Sendable {
    let parent: FailureScope?
    private let failed: Mutex<Bool>

    init(parent: FailureScope?, failed: Bool = false) {
        self.parent = parent
        self.failed = Mutex(failed)
    }

    func markFailed() {
        failed.withLock { $0 = true }
    }

    /// Whether this scope or an enclosing one has seen a failure.
    var hasFailure: Bool {
        if failed.withLock({ $0 }) { return true }
        return parent?.hasFailure ?? false
    }

    /// Only this scope (a group's own children).
    var ownFailure: Bool { failed.withLock { $0 } }
}
