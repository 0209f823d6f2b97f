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
            for observer in s.observers { observer.handle(event) }
        }
    }

    /// A chunk of a step's output: split into whole lines, each delivered once complete.
    public func output(_ step: StepRef, _ stream: OutputChannel, chunk: UnsafeRawBufferPointer) {
        state.withLock { s in
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

    /// A whole line (a `print` step's message).
    public func line(_ step: StepRef, _ stream: OutputChannel, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            let raw = UnsafeRawBufferPointer(buffer)
            state.withLock { s in
                for observer in s.observers { observer.output(step, stream, line: raw) }
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

    /// flow exits at once (see `RunObserver.abandon`): every observer writes out or records
    /// what it holds.
    public func abandon(exitStatus: Int32) {
        state.withLock { s in
            for observer in s.observers { observer.abandon(exitStatus: exitStatus) }
        }
    }

    public func finish() {
        state.withLock { s in
            for observer in s.observers { observer.finish() }
        }
    }
}
