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
        /// Every step instance that has started and not ended: what `abandon` ends. Keyed
        /// by identity, holding only the instance (10,000 concurrent steps: ~0.4 MB; whole
        /// transitions by path cost 3–5 MB there).
        var live: [ObjectIdentifier: StepInstance] = [:]
        /// The state each workflow leaf step (not an undo step) ended in, by path (a
        /// retried group's new instance replaces the old one's): the counts of the summary
        /// `abandon` gives, taken from the events delivered (the executor's own counts may
        /// be a step behind them).
        var ended: [String: StepState] = [:]
        /// When the run started (its `runStarted` event).
        var startedAt: Timestamp?
        /// Set by `abandon`: nothing more is delivered.
        var abandoned = false

        mutating func track(_ t: StepTransition, of instance: StepInstance) {
            switch t.to {
            case .running, .retrying, .undoing:
                live[ObjectIdentifier(instance)] = instance
            case .pending: break
            default:
                live.removeValue(forKey: ObjectIdentifier(instance))
                if t.step.isLeaf, !t.step.isUndo { ended[t.step.path] = t.to }
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
            if case .runStarted(let info) = event { s.startedAt = info.startedAt }
            for observer in s.observers { observer.handle(event) }
        }
    }

    /// A step's transition (`StepInstance.transition`), noted for `abandon`.
    func emit(_ transition: StepTransition, of instance: StepInstance) {
        state.withLock { s in
            guard !s.abandoned else { return }
            s.track(transition, of: instance)
            let event = RunEvent.stepState(transition)
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
            let depth = { (path: String) in path.utf8.reduce(0) { $1 == UInt8(ascii: "/") || $1 == UInt8(ascii: ".") ? $0 + 1 : $0 } }
            let live = s.live.values.map(\.snapshot).sorted { (depth($0.ref.path), $0.ref.path) > (depth($1.ref.path), $1.ref.path) }
            for step in live {
                // A step whose own end is waiting for this lock (and is dropped) ends as it
                // did; one under way is cancelled, one being undone fails its undo.
                let next: StepState = switch step.state {
                case .running, .retrying, .pending: .cancelled
                case .undoing: .undoFailed
                default: step.state
                }
                let from: StepState = step.state.isFinal || step.state == .undone || step.state == .undoFailed ? .running : step.state
                let t = StepTransition(step: step.ref, from: from, to: next, attempt: step.attempt,
                                       reason: next == step.state ? nil : "killed by the second signal", time: now,
                                       elapsed: step.elapsed)
                if step.ref.isLeaf, !step.ref.isUndo { s.ended[step.ref.path] = next }
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
