import Synchronization

/// One execution of one plan node, with its state machine.
///
/// Every change goes through `transition`, which checks the table in `StepState` and
/// emits the change as an event, so no step can be seen in an illegal state.
final class StepInstance: Sendable {
    let node: PlanNode
    let ref: StepRef
    let frame: ScopeFrame
    private let bus: EventBus
    private struct State {
        var state: StepState = .pending
        var attempt = 0
        var startedAt: Double?
    }
    private let state = Mutex(State())

    /// `label` replaces the node's own (`Executor.sharedNameLabels`).
    /// `failureAllowed`: its failure does not fail the run (`Executor.failureAllowedNodes`).
    /// `inRetriedGroup`: a group around it has `retry` (`Executor.retriedGroupNodes`).
    init(node: PlanNode, frame: ScopeFrame, bus: EventBus, label: String? = nil, isUndo: Bool = false, failureAllowed: Bool = false,
         inRetriedGroup: Bool = false) {
        self.node = node
        var ref = StepRef(node: node, isUndo: isUndo, label: label, failureAllowed: failureAllowed)
        ref.inRetriedGroup = inRetriedGroup
        self.ref = ref
        self.frame = frame
        self.bus = bus
    }

    var current: StepState { state.withLock { $0.state } }
    var attempt: Int { state.withLock { $0.attempt } }

    /// Moves to `next`; an illegal move is a programming error and stops the process
    /// rather than record a state the contract forbids.
    // Never inlined: inlined into the async functions that call it, its locals would join
    // their frames, which every running step's task holds (10,000 concurrent delay steps:
    // +35 MB when it was).
    @inline(never)
    /// `retried`: a failed or timed-out attempt that a retry follows, which is not the
    /// step's end: its failure is not marked allowed (only the last attempt's can be).
    func transition(to next: StepState, exitCode: Int32? = nil, signal: Int32? = nil, reason: String? = nil,
                    outputs: [String: String]? = nil, retried: Bool = false) {
        let event: StepTransition = state.withLock { s in
            precondition(s.state.canMove(to: next), "illegal step transition \(s.state.rawValue) → \(next.rawValue) for \(ref.path)")
            let from = s.state
            s.state = next
            let now = Timestamp.monotonic()
            if next == .running {
                s.attempt += 1
                if s.startedAt == nil { s.startedAt = now }
            }
            if next == .undoing { s.startedAt = now }
            let elapsed = next.isFinal || next == .undone || next == .undoFailed ? s.startedAt.map { now - $0 } : nil
            var step = ref
            if retried { step.failureAllowed = false }
            return StepTransition(step: step, from: from, to: next, attempt: max(s.attempt, 1), exitCode: exitCode,
                                  signal: signal, reason: reason, time: .now(), elapsed: elapsed,
                                  outputs: outputs)
        }
        bus.emit(event, of: self)
    }

    /// What `EventBus.abandon` needs of a step under way: its reference, state, attempt
    /// and the seconds it has run.
    var snapshot: (ref: StepRef, state: StepState, attempt: Int, elapsed: Double?) {
        state.withLock { s in (ref, s.state, max(s.attempt, 1), s.startedAt.map { Timestamp.monotonic() - $0 }) }
    }
}
