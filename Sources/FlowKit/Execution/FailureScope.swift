import Synchronization

/// Whether a step has failed earlier in the enclosing groups: what `success()` and
/// `failure()` look at, and why later steps of a failed sequential group are skipped.
final class FailureScope: Sendable {
    let parent: FailureScope?
    private let failed: Mutex<Bool>
    /// A scope that starts afresh after a failure (a `finally` list, a group run by
    /// `if: failure()`): its steps are not skipped for that failure (`hasFailure`), but
    /// `failure()` anywhere inside still sees it (`seesFailure`).
    let inheritsFailure: Bool
    /// A branch of a concurrent group: its parent's own failures are its siblings', which
    /// do not skip its steps (`hasFailure`); the status functions and `run.status` still
    /// see them (`seesFailure`). A branch that `max_parallel` held back until after a
    /// sibling failed runs when `fail_fast` is off; fail-fast skips it on its own.
    let isBranch: Bool

    init(parent: FailureScope?, failed: Bool = false, inheritsFailure: Bool = false, isBranch: Bool = false) {
        self.parent = parent
        self.failed = Mutex(failed)
        self.inheritsFailure = inheritsFailure
        self.isBranch = isBranch
    }

    /// What the status functions see: a failure in this scope or an enclosing one, or
    /// the one a fresh scope started after.
    var seesFailure: Bool {
        if inheritsFailure || failed.withLock({ $0 }) { return true }
        return parent?.seesFailure ?? false
    }

    func markFailed() {
        failed.withLock { $0 = true }
    }

    /// Whether this scope or an enclosing one has seen a failure (for a branch, not counting
    /// its siblings').
    var hasFailure: Bool {
        if failed.withLock({ $0 }) { return true }
        return (isBranch ? parent?.parent : parent)?.hasFailure ?? false
    }

    /// Only this scope (a group's own children).
    var ownFailure: Bool { failed.withLock { $0 } }
}
