/// Where a step's kept output starts another attempt, so that a replay of that output
/// keeps the attempts apart: the line `── attempt 2 ──` before the first line the attempt
/// printed. One rendering for every replay: `flow logs` (the journal stores the line among
/// the step's), the `tty` and `prefixed` replay of failed steps, JUnit's `<system-out>`.
///
/// An attempt is each time a step runs in the run: its own `retry` runs it again, and so
/// does a retried group around it (a new instance each time, whose attempts start at 1
/// again, so starts are counted by path). Without the marks a step that failed in two
/// attempts of its group showed their output run together.
public struct AttemptMarks: Sendable {
    /// How many times each leaf step (by path) has started.
    private var starts: [String: Int] = [:]
    /// Steps whose latest attempt has printed nothing yet, with its number.
    private var due: [String: Int] = [:]

    public init() {}

    /// Notes a transition: a leaf's start after an earlier one makes its mark due.
    public mutating func observe(_ t: StepTransition) {
        guard t.to == .running, t.step.isLeaf else { return }
        let attempt: Int
        if t.step.isUndo || !t.step.inRetriedGroup {
            // An undo step runs once per success it reverses (each a new instance): those
            // are not attempts of one another; only its own retries are. A step in no
            // retried group starts again only as its own retries: its `attempt` says which,
            // with no counting by path (a hash of it per step, in three observers).
            attempt = t.attempt
            // A retry of the previous instance that printed nothing left its mark due: the
            // next instance's first line got `── attempt 2 ──`, run once.
            if attempt == 1 { due[t.step.path] = nil }
        } else {
            attempt = starts[t.step.path, default: 0] + 1
            starts[t.step.path] = attempt
        }
        if attempt > 1 { due[t.step.path] = attempt }
    }

    /// The mark to write before the next output line of the step at `path`, when one is
    /// due (it is then no longer due), without its line break.
    @inline(__always)
    public mutating func take(_ path: String) -> String? {
        guard !due.isEmpty else { return nil }
        return due.removeValue(forKey: path).map(Self.line)
    }

    /// The line that starts attempt `attempt`'s output.
    public static func line(attempt: Int) -> String {
        "── attempt \(attempt) ──"
    }
}
