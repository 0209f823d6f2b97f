import FlowKit

/// The state of a run's steps, derived from its transitions in order.
///
/// The journal's hot path records `transitions` (one row per transition); the `steps`
/// columns that change during a run and the `attempts` rows follow from them. The recorder
/// keeps a ledger as the run goes and writes what changed into those tables with each
/// commit (`takeChanges`); readers of a run that never finished (live, or killed) replay
/// its transitions into a ledger of their own, since its lock file may hold transitions
/// the tables lack. One set of rules for both.
struct StepLedger {
    /// What changes about a step during a run.
    struct Entry: Equatable {
        var state: String
        var attempts = 0
        var exitCode: Int?
        /// The signal that ended the latest attempt.
        var signal: Int?
        var startedAt: Double?
        var endedAt: Double?
        /// Order of reaching `succeeded` in the run (what `undo` reverses).
        var completedSeq: Int?
        /// Whether its latest transition was a failure `continue_on_error` allowed: nil
        /// while it never was (then its `steps` row is written without the column: a run
        /// without allowed failures writes nothing more), false once a later transition
        /// (a retried group's next instance) left it behind.
        var allowedFailure: Bool?
    }

    /// One attempt of a step, from its start to the state it ended in.
    struct Attempt {
        var path: String
        var number: Int
        var startedAt: Double
        var endedAt: Double
        var state: String
        var exitCode: Int?
        var signal: Int?
    }

    private(set) var entries: [String: Entry] = [:]
    private(set) var attempts: [Attempt] = []
    private var attemptStarts: [String: Double] = [:]
    private var completed = 0
    /// Paths whose entry changed since `takeChanges`, in the order they first changed.
    private var changed: [String] = []
    private var changedSet: Set<String> = []
    /// `attempts` already handed out by `takeChanges`.
    private var attemptsTaken = 0

    /// The entries changed and the attempts ended since the last call: what a commit
    /// writes to `steps` and `attempts`.
    mutating func takeChanges() -> (entries: [(path: String, entry: Entry)], attempts: ArraySlice<Attempt>) {
        let entries = changed.compactMap { path in self.entries[path].map { (path: path, entry: $0) } }
        changed.removeAll(keepingCapacity: true)
        changedSet.removeAll(keepingCapacity: true)
        let ended = attempts[attemptsTaken...]
        attemptsTaken = attempts.count
        return (entries, ended)
    }

    /// Applies one transition (`to` is a `StepState` raw value; `allowedFailure`, see
    /// `TransitionRecord`).
    mutating func apply(path: String, to: String, attempt: Int, time: Double, exitCode: Int?, signal: Int?,
                        allowedFailure: Bool = false) {
        var entry = entries[path] ?? Entry(state: "pending")
        // The rollback reverses every instance of a retried group's step that succeeded,
        // latest first. An entry is the step's latest instance: the undo of an earlier one
        // leaves it as it is when that instance did not succeed (failed, skipped, …) or was
        // reversed already. The failed run's `show` said `undone` for a step whose last
        // attempt failed, counting no failure. Except that the reversal of an earlier
        // instance after the latest one's was undone is the step's too: one that failed
        // leaves it `undo_failed` (and one cut short, `undoing`), as the summary counts it;
        // `undone` said the step was reversed while what an earlier attempt made was not.
        switch StepState(rawValue: to) {
        case .undoing where !["succeeded", "pending", "undone"].contains(entry.state),
             .undone where entry.state != "undoing", .undoFailed where entry.state != "undoing":
            return
        case .skipped:
            // A new instance (a retried group's next attempt) that is skipped keeps nothing
            // of the one before: `show` gave it that attempt's exit code and time.
            entry = Entry(state: to, completedSeq: entry.completedSeq, allowedFailure: entry.allowedFailure.map { _ in false })
        default:
            break
        }
        entry.state = to
        if allowedFailure || entry.allowedFailure != nil { entry.allowedFailure = allowedFailure }
        switch StepState(rawValue: to) {
        case .running:
            entry.attempts = attempt
            // A retried step's time spans its attempts; attempt 1 again is a new instance
            // (a retried group runs its steps again), whose time is its own, as the live
            // output and the step's `attempts` say: from the first attempt, `show` gave a
            // print after a retried group's delay the delay's time.
            if entry.startedAt == nil || attempt == 1 { entry.startedAt = time }
            attemptStarts[path] = time
        case .succeeded, .failed, .timedOut, .cancelled:
            entry.exitCode = exitCode
            entry.signal = signal
            entry.endedAt = time
            if to == StepState.succeeded.rawValue {
                completed += 1
                entry.completedSeq = completed
            }
            attempts.append(Attempt(path: path, number: attempt, startedAt: attemptStarts.removeValue(forKey: path) ?? time,
                                    endedAt: time, state: to, exitCode: exitCode, signal: signal))
        case .undoing, .undone, .undoFailed:
            // Rollback happens to a step that already ended: its own run time stays the
            // step's (its undo steps have times of their own).
            break
        default:
            entry.endedAt = StepState(rawValue: to)?.isFinal == true ? time : nil
        }
        entries[path] = entry
        if changedSet.insert(path).inserted { changed.append(path) }
    }

    /// Makes the failure `path` ended in an allowed one once its end was applied: the retry
    /// that failed attempt waited for was called off (`RunEvent.note`'s `allowing`). No
    /// transition says so (none can follow that end): readers replaying the lock file of
    /// a killed run do not see it there.
    mutating func allow(path: String) {
        guard var entry = entries[path],
              entry.state == StepState.failed.rawValue || entry.state == StepState.timedOut.rawValue else { return }
        entry.allowedFailure = true
        entries[path] = entry
        if changedSet.insert(path).inserted { changed.append(path) }
    }
}
