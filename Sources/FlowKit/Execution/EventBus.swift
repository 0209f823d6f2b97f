import Synchronization

/// Delivers run events and output lines to every observer, one at a time and in order.
///
/// Transitions are delivered synchronously: when `emit` returns, every observer (the
/// journal too) has seen the event. An observer may defer durable work, but `settle`,
/// called before every action with effects outside flow (a spawn, a fail-fast signal),
/// makes it catch up first: nothing outside flow follows from a finished step before the
/// journal has it.
public final class EventBus: Sendable {
    private struct State {
        var observers: [any RunObserver] = []
        var splitters: [String: LineSplitter] = [:]
        /// The latest transition of every step that has started and not ended, by path:
        /// what `abandon` ends.
        var live: [String: StepTransition] = [:]
        /// The state each workflow leaf step (not an undo step) ended in, by path: the
        /// counts of the summary `abandon` gives, taken from the events it has delivered
        /// (the executor's own counts may be a step behind them).
        var ended: [String: StepState] = [:]
        /// When the run started (its `runStarted` event).
        var startedAt: Timestamp?
        /// Set by `abandon`: nothing more is delivered.
        var abandoned = false

        mutating func track(_ event: RunEvent) {
            switch event {
            case .runStarted(let info):
                startedAt = info.startedAt
            case .stepState(let t):
                switch t.to {
                case .running, .retrying, .undoing: live[t.step.path] = t
                case .pending: break
                default:
                    live.removeValue(forKey: t.step.path)
                    if t.step.isLeaf, !t.step.isUndo { ended[t.step.path] = t.to }
                }
            default:
                break
            }
        }
    }

    private let state = Mutex(State())

    public init(observers: [any RunObserver] = []) {
        state.withLock { $0.observers = observers }
    }

    public func add(_ observer: any RunObserver) {
        state.withLock { $0.observers.append(observer) }
    }

    public func emit(_ event: RunEvent) {
        state.withLock { s in
            guard !s.abandoned else { return }
            s.track(event)
            for observer in s.observers { observer.handle(event) }
        }
    }

    /// A chunk of a step's output: split into whole lines, each delivered once complete.
    public func output(_ step: StepRef, _ stream: OutputChannel, chunk: UnsafeRawBufferPointer) {
        state.withLock { s in
            guard !s.abandoned else { return }
            let key = stream == .stdout ? step.path + "\u{1}o" : step.path + "\u{1}e"
            var splitter = s.splitters.removeValue(forKey: key) ?? LineSplitter()
            let observers = s.observers
            for observer in observers { observer.outputChunk(step, stream, chunk: chunk) }
            splitter.feedLines(chunk) { lines in
                for observer in observers { observer.outputLines(step, stream, lines: lines) }
            }
            // Kept only with an unfinished line: whole-line output leaves nothing to flush.
            if splitter.hasPartialLine { s.splitters[key] = splitter }
            for observer in observers { observer.endOfChunk() }
        }
    }

    /// A message of whole lines (a `print` step's, flow's own about a step): each line is
    /// delivered on its own, as a step's output lines are (a multi-line message, such as a
    /// YAML block, would otherwise be one "line" holding line breaks: unprefixed lines in
    /// `prefixed` mode, one JSON event). One line break at the end ends the last line.
    public func line(_ step: StepRef, _ stream: OutputChannel, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            var lines = UnsafeRawBufferPointer(buffer)
            if lines.last == 0x0A { lines = UnsafeRawBufferPointer(rebasing: lines.dropLast()) }
            state.withLock { s in
                guard !s.abandoned else { return }
                var start = 0
                while true {
                    let end = lines[start...].firstIndex(of: 0x0A) ?? lines.count
                    let line = UnsafeRawBufferPointer(rebasing: lines[start..<end])
                    for observer in s.observers { observer.output(step, stream, line: line) }
                    guard end < lines.count else { break }
                    start = end + 1
                }
            }
        }
    }

    /// Delivers a step's unfinished last line (output of a killed step is kept to its last byte).
    public func flush(_ step: StepRef) {
        state.withLock { s in
            // Most steps print nothing, or whole lines only: nothing to look up then.
            if s.splitters.isEmpty { return }
            let observers = s.observers
            for (stream, key) in [(OutputChannel.stdout, step.path + "\u{1}o"), (.stderr, step.path + "\u{1}e")] {
                guard var splitter = s.splitters.removeValue(forKey: key) else { continue }
                splitter.finishLines { lines in
                    for observer in observers { observer.outputLines(step, stream, lines: lines) }
                }
            }
        }
    }

    /// Lets every observer catch up with deferred work before flow acts (see the type).
    public func settle() {
        let observers = state.withLock { $0.observers }
        for observer in observers { observer.settle() }
    }

    /// flow exits at once (a second signal killed every step; see `RunObserver.abandon`).
    /// The run still ends as every run does, for every observer: each step that was under
    /// way moves to `cancelled` (a step being undone to `undo_failed`), innermost first,
    /// then `runFinished` (`cancelled`, `exitStatus`). Then every observer writes out or
    /// records what it holds, and nothing more is delivered (the steps' own ends, racing in
    /// from the hub, would say it twice).
    public func abandon(exitStatus: Int32) {
        state.withLock { s in
            guard !s.abandoned else { return }
            let now = Timestamp.now()
            let depth = { (path: String) in path.utf8.reduce(0) { $1 == UInt8(ascii: "/") ? $0 + 1 : $0 } }
            let live = s.live.values.sorted { (depth($0.step.path), $0.step.path) > (depth($1.step.path), $1.step.path) }
            for last in live {
                let next: StepState = last.to == .undoing ? .undoFailed : .cancelled
                let t = StepTransition(step: last.step, from: last.to, to: next, attempt: last.attempt,
                                       reason: "killed by the second signal", time: now, elapsed: now.unix - last.time.unix)
                if last.step.isLeaf, !last.step.isUndo { s.ended[last.step.path] = next }
                for observer in s.observers { observer.handle(.stepState(t)) }
            }
            let elapsed = s.startedAt.map { now.unix - $0.unix } ?? 0
            let counts = s.ended.values.reduce(into: [StepState: Int]()) { $0[$1, default: 0] += 1 }
            let outcome = RunOutcome(status: .cancelled, exitCode: exitStatus, counts: counts,
                                     elapsed: elapsed, time: now)
            for observer in s.observers { observer.handle(.runFinished(outcome)) }
            s.abandoned = true
            for observer in s.observers { observer.abandon(exitStatus: exitStatus) }
        }
    }

    public func finish() {
        state.withLock { s in
            for observer in s.observers { observer.finish() }
        }
    }
}
