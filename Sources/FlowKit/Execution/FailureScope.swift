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
    /// neither skip its steps (`hasFailure`) nor show in its status functions
    /// (`seesFailure`). Siblings are not earlier steps: whether one has failed by the time
    /// a branch starts is timing (`max_parallel` only queues them), and an implied
    /// `success()` and a written-out one must agree. A branch that `max_parallel` held
    /// back until after a sibling failed runs when `fail_fast` is off; fail-fast skips it
    /// on its own.
    let isBranch: Bool

    init(parent: FailureScope?, failed: Bool = false, inheritsFailure: Bool = false, isBranch: Bool = false) {
        self.parent = parent
        self.failed = Mutex(failed)
        self.inheritsFailure = inheritsFailure
        self.isBranch = isBranch
    }

    /// What the status functions see: a failure in this scope or an enclosing one, or
    /// the one a fresh scope started after (for a branch, not counting its siblings').
    var seesFailure: Bool {
        if inheritsFailure || failed.withLock({ $0 }) { return true }
        guard let parent else { return false }
        // A branch skips its group's own failures (its siblings') but keeps the failure
        // the group itself started after (a concurrent group run by `if: failure()`).
        if isBranch { return parent.inheritsFailure || (parent.parent?.seesFailure ?? false) }
        return parent.seesFailure
    }

    /// Whether a step failed anywhere before in this scope or an enclosing one, a
    /// concurrent sibling's failure included: what `run.status` ("the run's status so
    /// far") says in a `finally`, which is the run's and not the status functions' view.
    var seesAnyFailure: Bool {
        if inheritsFailure || failed.withLock({ $0 }) { return true }
        return parent?.seesAnyFailure ?? false
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
