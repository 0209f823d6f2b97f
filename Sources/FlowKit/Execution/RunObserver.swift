/// Something that watches a run: a reporter, the journal, a test.
///
/// The `EventBus` calls observers one at a time, in event order, under its lock; an
/// observer's state needs no lock of its own for that reason.
public protocol RunObserver: AnyObject, Sendable {
    func handle(_ event: RunEvent)
    /// One whole line a step printed, without its line break.
    func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer)
    /// Whole lines a step printed, each ending in `\n` (see `LineSplitter.feedLines`). By
    /// default, `output(_:_:line:)` for each; an observer that handles output in bulk (the
    /// journal, the prefixed reporter) takes the run at once.
    func outputLines(_ step: StepRef, _ stream: OutputChannel, lines: UnsafeRawBufferPointer)
    /// A chunk of a step's output exactly as read, before it is cut into lines (a partial
    /// line, a lone `\r`, no newline added at the end): for `--output raw`, which passes the
    /// bytes through untouched. By default ignored.
    func outputChunk(_ step: StepRef, _ stream: OutputChannel, chunk: UnsafeRawBufferPointer)
    /// A chunk of a child's output has been delivered line by line: a good moment to
    /// flush, so a long-running step's lines show as they come.
    func endOfChunk()
    /// Called when the run ends.
    func finish()
    /// flow is about to exit at once (a second Ctrl-C killed every step): write out or
    /// record what is held; no event follows. By default, `finish`.
    func abandon(exitStatus: Int32)
    /// flow is about to act on the world (start a process, signal siblings): an observer
    /// that defers work (the journal) must now record every finished step it has been told
    /// of. See `EventBus.settle`.
    func settle()
    /// flow is about to start a step: an observer whose `settle` would make the step's
    /// start wait (the journal's, for its database) does that work now, before the step's
    /// clock starts. See `EventBus.catchUp`.
    func catchUp()
}

extension RunObserver {
    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {}
    public func outputLines(_ step: StepRef, _ stream: OutputChannel, lines: UnsafeRawBufferPointer) {
        LineSplitter.forEachLine(in: lines) { output(step, stream, line: $0) }
    }
    public func outputChunk(_ step: StepRef, _ stream: OutputChannel, chunk: UnsafeRawBufferPointer) {}
    public func endOfChunk() {}
    public func finish() {}
    public func abandon(exitStatus: Int32) { finish() }
    public func settle() {}
    public func catchUp() {}
}
