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
        /// Steps' unfinished last lines, by path and stream, with the step they belong to.
        var splitters: [String: (step: StepRef, splitter: LineSplitter)] = [:]
        /// Every step instance that has started and not ended: what `abandon` ends. Keyed
        /// by identity, holding only the instance (10,000 concurrent steps: ~0.4 MB; whole
        /// transitions by path cost 3–5 MB there).
        var live: [ObjectIdentifier: (instance: StepInstance, delivered: StepState)] = [:]
        /// The state each workflow leaf step (not an undo step) ended in, by path (a
        /// retried group's new instance replaces the old one's): the counts of the summary
        /// `abandon` gives, taken from the events delivered (the executor's own counts may
        /// be a step behind them).
        var ended: [String: StepState] = [:]
        /// The same for each group (and `use`) of the workflow that ended: `abandon`'s
        /// summary counts some, as the journal does (see `groupCounts`).
        var groupsEnded: [String: StepState] = [:]
        /// The paths in `ended` and `groupsEnded` whose end is an allowed failure
        /// (`StepTransition.isAllowedFailure`): `abandon`'s `allowedFailures`.
        var allowedEnds: Set<String> = []
        /// When the run started (its `runStarted` event).
        var startedAt: Timestamp?
        /// Set by `abandon`: nothing more is delivered.
        var abandoned = false
        /// The run's end as delivered (a second signal right then adds none).
        var finished: RunOutcome?

        /// Delivers what `splitter` holds of `step`'s `stream` (its unfinished last line).
        func deliverLastLine(_ splitter: LineSplitter, of step: StepRef, _ stream: OutputChannel) {
            var splitter = splitter
            splitter.finishLines { lines in
                for observer in observers { observer.outputLines(step, stream, lines: lines) }
            }
        }

        mutating func track(_ t: StepTransition, of instance: StepInstance) {
            switch t.to {
            case .running, .retrying, .undoing:
                live[ObjectIdentifier(instance)] = (instance, t.to)
            case .pending: break
            default:
                live.removeValue(forKey: ObjectIdentifier(instance))
                if !t.step.isUndo { noteEnd(t.step, t.to) }
            }
        }

        /// Records `step`'s end as its latest state, unless it is the rollback of an
        /// earlier instance (a retried group's) of a step whose latest instance did not
        /// succeed: as the journal keeps it.
        mutating func noteEnd(_ step: StepRef, _ to: StepState) {
            let path = step.path
            if step.isLeaf {
                if (to == .undone || to == .undoFailed), ended[path] != .succeeded { return }
                ended[path] = to
            } else {
                if (to == .undone || to == .undoFailed), groupsEnded[path] != .succeeded { return }
                groupsEnded[path] = to
            }
            if step.failureAllowed, to == .failed || to == .timedOut {
                allowedEnds.insert(path)
            } else if !allowedEnds.isEmpty {
                allowedEnds.remove(path)
            }
        }

        /// The groups the run's summary counts beside its leaves, by the journal's rule
        /// (`Journal.isCountedAlone`): one whose own `timeout` ended it, one whose `undo`
        /// failed, and one that failed with nothing inside it having run (a `use` given a
        /// value not `allowed`).
        func groupCounts() -> [(path: String, state: StepState)] {
            groupsEnded.compactMap { path, state in
                switch state {
                case .timedOut, .undoFailed: return (path, state)
                case .failed:
                    let inside = path + "."
                    let ran = ended.contains { $0.key.hasPrefix(inside) && $0.value != .skipped }
                        || groupsEnded.contains { $0.key.hasPrefix(inside) && $0.value != .skipped }
                    return ran ? nil : (path, state)
                default: return nil
                }
            }
        }
    }

    private let state = Mutex(State())
    /// Events `announce` put ahead of everything emitted after it, not yet delivered; a
    /// lock of their own, since `announce` must not wait for the bus's.
    private let announced = Mutex<[RunEvent]>([])
    /// Whether `announced` may hold any: the one check every delivery makes.
    private let hasAnnounced = Atomic<Bool>(false)
    /// Set by `close`: the steps' transitions are no longer delivered.
    private let closed = Atomic<Bool>(false)

    public init(observers: [any RunObserver] = []) {
        state.withLock { $0.observers = observers }
    }

    public func add(_ observer: any RunObserver) {
        state.withLock { $0.observers.append(observer) }
    }

    public func emit(_ event: RunEvent) {
        state.withLock { s in
            deliverAnnounced(&s)
            deliver(event, &s)
        }
    }

    /// Puts `event` ahead of everything emitted from now on, without waiting for the bus:
    /// whichever delivery takes the bus next delivers it first (`deliverAnnounced` does
    /// when none comes). For a signal's note, which must come before the steps the signal
    /// stops say so, while stopping them must not wait for an observer that holds the bus
    /// writing to output nobody reads (`flow run … | less`): the steps went on running.
    public func announce(_ event: RunEvent) {
        announced.withLock { $0.append(event) }
        hasAnnounced.store(true, ordering: .releasing)
    }

    /// Delivers what `announce` put ahead, if no other delivery has yet.
    public func deliverAnnounced() {
        guard hasAnnounced.load(ordering: .acquiring) else { return }
        state.withLock { deliverAnnounced(&$0) }
    }

    /// With the bus held: the announced events first.
    private func deliverAnnounced(_ s: inout State) {
        guard hasAnnounced.load(ordering: .acquiring) else { return }
        let events = announced.withLock { events in
            hasAnnounced.store(false, ordering: .releasing)
            defer { events.removeAll() }
            return events
        }
        for event in events { deliver(event, &s) }
    }

    private func deliver(_ event: RunEvent, _ s: inout State) {
        // Nothing follows the run's end: a signal just after it (its note said what
        // was left of `finally` and rollback ran, after `run_finished`, and flow exited
        // 0 with nothing cancelled) comes too late to change the run.
        guard !s.abandoned, s.finished == nil else { return }
        switch event {
        case .runStarted(let info): s.startedAt = info.startedAt
        case .runFinished(let outcome): s.finished = outcome
        case .note(_, _, let allowing):
            for path in allowing where [.failed, .timedOut].contains(s.ended[path] ?? s.groupsEnded[path]) {
                s.allowedEnds.insert(path)
            }
        default: break
        }
        for observer in s.observers { observer.handle(event) }
    }

    /// Stops delivering the steps' transitions, just before every step is killed at once
    /// (a second signal, SIGQUIT), and `abandon` says so and ends the run: the steps it
    /// kills told of their ends first (`⊘ build cancelled`, then "second signal; killed
    /// every step", in a quarter of runs). Their ends are `abandon`'s to tell, from their
    /// instances, as for a step one move ahead of what was delivered; their output is
    /// still delivered.
    public func close() {
        closed.store(true, ordering: .releasing)
    }

    /// A step's transition (`StepInstance.transition`), noted for `abandon`.
    func emit(_ transition: StepTransition, of instance: StepInstance) {
        state.withLock { s in
            deliverAnnounced(&s)
            guard !s.abandoned, !closed.load(ordering: .acquiring) else { return }
            s.track(transition, of: instance)
            let event = RunEvent.stepState(transition)
            for observer in s.observers { observer.handle(event) }
        }
    }

    /// A chunk of a step's output: split into whole lines, each delivered once complete.
    public func output(_ step: StepRef, _ stream: OutputChannel, chunk: UnsafeRawBufferPointer) {
        state.withLock { s in
            deliverAnnounced(&s)
            guard !s.abandoned else { return }
            let key = stream == .stdout ? step.path + "\u{1}o" : step.path + "\u{1}e"
            var splitter = s.splitters.removeValue(forKey: key)?.splitter ?? LineSplitter()
            let observers = s.observers
            for observer in observers { observer.outputChunk(step, stream, chunk: chunk) }
            splitter.feedLines(chunk) { lines in
                for observer in observers { observer.outputLines(step, stream, lines: lines) }
            }
            // Kept only with an unfinished line: whole-line output leaves nothing to flush.
            if splitter.hasPartialLine { s.splitters[key] = (step, splitter) }
            for observer in observers { observer.endOfChunk() }
        }
    }

    /// A message of whole lines (a `print` step's, flow's own about a step): each line is
    /// delivered on its own, cut as a step's output is (`LineSplitter.forEachLine`: without
    /// its `\n` or `\r\n`). A multi-line message (a YAML block) would otherwise be one
    /// "line" holding line breaks: unprefixed lines in `prefixed` mode, one JSON event. One
    /// line break at the end ends the last line; an empty message is one empty line.
    public func line(_ step: StepRef, _ stream: OutputChannel, _ text: String) {
        var text = text
        text.withUTF8 { buffer in
            let message = UnsafeRawBufferPointer(buffer)
            state.withLock { s in
                deliverAnnounced(&s)
                guard !s.abandoned else { return }
                if message.isEmpty {
                    for observer in s.observers { observer.output(step, stream, line: message) }
                    return
                }
                LineSplitter.forEachLine(in: message) { line in
                    for observer in s.observers { observer.output(step, stream, line: line) }
                }
            }
        }
    }

    /// Delivers a step's unfinished last line (output of a killed step is kept to its last byte).
    public func flush(_ step: StepRef) {
        state.withLock { s in
            // Most steps print nothing, or whole lines only: nothing to look up then.
            if s.splitters.isEmpty || s.abandoned { return }
            deliverAnnounced(&s)
            for (stream, key) in [(OutputChannel.stdout, step.path + "\u{1}o"), (.stderr, step.path + "\u{1}e")] {
                guard let pending = s.splitters.removeValue(forKey: key) else { continue }
                s.deliverLastLine(pending.splitter, of: step, stream)
            }
        }
    }

    /// Lets every observer catch up with deferred work before flow acts (see the type).
    public func settle() {
        let observers = state.withLock { $0.observers }
        for observer in observers { observer.settle() }
    }

    /// Before a step moves to `running`: every observer does the work its `settle` would
    /// make the step's spawn wait for (see `RunObserver.catchUp`). Why: a step's time is
    /// its own, from its `running` (right before its process starts) to its end; flow's
    /// wait for the journal before the spawn (another process holding the database
    /// locked: 10 s; a commit of a 30 MB output value under way: 2 s) was in the next
    /// step's time, on its `✓` line, in `elapsed_seconds`, JUnit's `time`, `show`'s
    /// duration, and ran down its `timeout` before its process had started.
    func catchUp() {
        let observers = state.withLock { $0.observers }
        for observer in observers { observer.catchUp() }
    }

    /// flow exits at once (a second signal killed every step; see `RunObserver.abandon`).
    /// The run still ends as every run does, for every observer: the killed steps'
    /// unfinished last lines, then each step under way moves to `cancelled` (through
    /// `running` from `retrying`, as the state table says; a step being undone to
    /// `undo_failed`), innermost first, then `runFinished` (`cancelled`, `exitStatus`) —
    /// unless the run's end was delivered already. Then every observer writes out or
    /// records what it holds, and nothing more is delivered (the steps' own ends, racing in
    /// from the hub, would say it twice).
    /// Returns the status flow exits with: `exitStatus`, or the run's own when its end was
    /// delivered first.
    /// `announce` says why on stderr, first, unless the run's end came first (then it
    /// would follow the summary as if the run had not ended); `reason` is the killed
    /// steps' reason. `leafSteps` is how many leaf steps the run has (`Executor.leafCount`;
    /// `nil` when every one of them has an end before anything runs, as in `flow undo`):
    /// those never reached stay `pending` in the journal, and the summary counts them so
    /// too (it left them out: `1 succeeded, 1 cancelled` where `flow runs` said `1
    /// succeeded, 1 cancelled, 3 pending` of the same run).
    public func abandon(exitStatus: Int32, reason: String = "killed by the second signal", leafSteps: Int? = nil,
                        announce: () -> Void = {}) -> Int32 {
        state.withLock { s -> Int32 in
            guard !s.abandoned else { return exitStatus }
            deliverAnnounced(&s)
            if s.finished == nil { announce() }
            defer {
                s.abandoned = true
                for observer in s.observers { observer.abandon(exitStatus: exitStatus) }
            }
            for (key, pending) in s.splitters.sorted(by: { $0.key < $1.key }) {
                s.deliverLastLine(pending.splitter, of: pending.step, key.hasSuffix("\u{1}e") ? .stderr : .stdout)
            }
            s.splitters.removeAll()
            if let finished = s.finished { return finished.exitCode }
            let now = Timestamp.now()
            let depth = { (path: String) in path.utf8.reduce(0) { $1 == UInt8(ascii: ".") ? $0 + 1 : $0 } }
            let live = s.live.values.map { (step: $0.instance.snapshot, delivered: $0.delivered) }
                .sorted { (depth($0.step.ref.path), $0.step.ref.path) > (depth($1.step.ref.path), $1.step.ref.path) }
            var transitions: [StepTransition] = []
            let killed = reason
            for (step, delivered) in live {
                func move(_ from: StepState, _ to: StepState, attempt: Int, why: String? = killed, elapsed: Double? = step.elapsed) {
                    transitions.append(StepTransition(step: step.ref, from: from, to: to, attempt: attempt, reason: why,
                                                      time: now, elapsed: elapsed))
                }
                // From what the observers were told (the step may be one move ahead: its own
                // event waits for this lock, and is dropped), to an end the table allows.
                switch (delivered, step.state) {
                case (.running, .running):
                    move(.running, .cancelled, attempt: step.attempt)
                case (.running, let end) where end.isFinal:
                    move(.running, end, attempt: step.attempt, why: nil)
                case (.retrying, .retrying):
                    move(.retrying, .running, attempt: step.attempt + 1, why: nil, elapsed: nil)
                    move(.running, .cancelled, attempt: step.attempt + 1)
                case (.retrying, _):
                    move(.retrying, .running, attempt: step.attempt, why: nil, elapsed: nil)
                    move(.running, .cancelled, attempt: step.attempt)
                case (.undoing, .undone), (.undoing, .undoFailed):
                    move(.undoing, step.state, attempt: step.attempt, why: nil)
                case (.undoing, _):
                    move(.undoing, .undoFailed, attempt: step.attempt)
                default:
                    move(delivered, .cancelled, attempt: step.attempt)
                }
            }
            for t in transitions {
                if !t.step.isUndo, t.to.isFinal { s.noteEnd(t.step, t.to) }
                for observer in s.observers { observer.handle(.stepState(t)) }
            }
            let elapsed = s.startedAt.map { now.unix - $0.unix } ?? 0
            let counted = s.ended.map { (path: $0.key, state: $0.value) } + s.groupCounts()
            var counts: [StepState: Int] = [:]
            var allowed: [StepState: Int] = [:]
            for (path, state) in counted {
                counts[state, default: 0] += 1
                if s.allowedEnds.contains(path) { allowed[state, default: 0] += 1 }
            }
            if let leafSteps, leafSteps > s.ended.count { counts[.pending] = leafSteps - s.ended.count }
            let outcome = RunOutcome(status: .cancelled, exitCode: exitStatus, counts: counts, elapsed: elapsed, time: now,
                                     allowedFailures: allowed)
            for observer in s.observers { observer.handle(.runFinished(outcome)) }
            return exitStatus
        }
    }

    public func finish() {
        state.withLock { s in
            guard !s.abandoned else { return }
            for observer in s.observers { observer.finish() }
        }
    }
}
