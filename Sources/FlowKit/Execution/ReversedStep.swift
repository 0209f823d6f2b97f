/// A step `flow undo` reverses: one instance of it that succeeded in the run being undone,
/// with the result recorded then.
///
/// A retried group runs its steps again as new instances, and the run's own rollback
/// reverses every one that succeeded, each with its own outputs; `flow undo` does the same,
/// so one path can come several times, in the order its instances succeeded.
public struct ReversedStep: Sendable {
    public var path: String
    public var result: StepResult
    /// Which of the step's successes in that run this is (from 1, in the order they
    /// happened), and how many it had: said in the reason of its recorded success when it
    /// had more than one, so that a later `flow undo` knows which ones this undo reversed.
    public var success: Int
    public var successes: Int
    /// False for a success this undo does not reverse (no `undo`, reversed already, or an
    /// earlier undo did): given all the same, in its place in the order, so that the undo
    /// of what succeeded after it sees its result as it was then (the id a sibling created
    /// in that attempt, not in the last), as in the run's own rollback (`RunState.reinstate`).
    public var reverses: Bool

    public init(path: String, result: StepResult, success: Int = 1, successes: Int = 1, reverses: Bool = true) {
        self.path = path
        self.result = result
        self.success = success
        self.successes = successes
        self.reverses = reverses
    }
}
