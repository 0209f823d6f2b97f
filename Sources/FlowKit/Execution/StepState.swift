/// The lifecycle states of a step, spelled as the contract spells them.
public enum StepState: String, Sendable, CaseIterable {
    case pending
    case running
    case succeeded
    case failed
    case timedOut = "timed_out"
    case cancelled
    case skipped
    case retrying
    case undoing
    case undone
    case undoFailed = "undo_failed"

    /// The one transition table: every legal move between states. Anything else is a bug
    /// and `StepInstance.transition` refuses it.
    public static let transitions: [StepState: Set<StepState>] = [
        .pending: [.running, .skipped],
        .running: [.succeeded, .failed, .timedOut, .cancelled],
        .failed: [.retrying],
        .timedOut: [.retrying],
        .retrying: [.running],
        .succeeded: [.undoing],
        .undoing: [.undone, .undoFailed],
    ]

    public func canMove(to next: StepState) -> Bool {
        Self.transitions[self]?.contains(next) ?? false
    }

    /// Whether no more transitions happen in a normal run (rollback aside).
    public var isFinal: Bool {
        switch self {
        case .pending, .running, .retrying, .undoing: return false
        default: return true
        }
    }

    /// The symbol reporters show for the state.
    public var symbol: String {
        switch self {
        case .pending: return "·"
        case .running: return "▶"
        case .succeeded: return "✓"
        case .failed: return "✗"
        case .timedOut: return "⏱"
        case .cancelled: return "⊘"
        case .skipped: return "○"
        case .retrying: return "↻"
        case .undoing: return "↶"
        case .undone: return "↺"
        case .undoFailed: return "✗"
        }
    }
}
