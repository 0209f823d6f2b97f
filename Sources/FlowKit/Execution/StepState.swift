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
        Self.moves[ordinal] & (1 << next.ordinal) != 0
    }

    /// `transitions` as one bit mask of next states per state, by `ordinal`: asked at every
    /// transition, where hashing the states (by their raw strings) cost ~1,000
    /// instructions per step.
    private static let moves: [UInt16] = allCases.map { state in
        (transitions[state] ?? []).reduce(0) { $0 | 1 << $1.ordinal }
    }

    /// The case's position in `allCases`.
    private var ordinal: Int {
        switch self {
        case .pending: 0
        case .running: 1
        case .succeeded: 2
        case .failed: 3
        case .timedOut: 4
        case .cancelled: 5
        case .skipped: 6
        case .retrying: 7
        case .undoing: 8
        case .undone: 9
        case .undoFailed: 10
        }
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
