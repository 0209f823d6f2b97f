/// `--output raw`: steps' output goes to flow's stdout and stderr unprefixed and byte for
/// byte, as read (partial lines and lone `\r` at once, invalid UTF-8 as it is, no newline
/// added); flow adds only failure lines and the summary. Captured so that the journal
/// records it too; with `--no-journal` the steps write to flow's stdout and stderr
/// directly (the fastest path, like make) and nothing arrives here but `print` lines.
public final class RawReporter: RunObserver, @unchecked Sendable {
    let out = OutputWriter(fd: 1)
    let err = OutputWriter(fd: 2)
    let style: ReporterStyle

    public init(color: Bool) {
        style = ReporterStyle(color: color)
    }

    public func handle(_ event: RunEvent) {
        switch event {
        case .stepState(let t) where [.failed, .timedOut].contains(t.to) && t.step.isLeaf:
            err.append("\(style.state(t.to)) \(t.step.label) \(ReporterStyle.detail(t))\n")
            err.flush()
        case .runFinished(let outcome):
            out.flush()
            err.append(style.summary(outcome) + "\n")
            err.flush()
        default:
            break
        }
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        // Whole lines: print steps (and flow's own line when a step cannot start).
        let writer = stream == .stdout ? out : err
        writer.append(line)
        writer.append(byte: 0x0A)
        writer.flush()
    }

    public func outputChunk(_ step: StepRef, _ stream: OutputChannel, chunk: UnsafeRawBufferPointer) {
        // Written as read, at once: a prompt or a progress bar shows before its line ends.
        let writer = stream == .stdout ? out : err
        writer.append(chunk)
        writer.flush()
    }

    public func outputLines(_ step: StepRef, _ stream: OutputChannel, lines: UnsafeRawBufferPointer) {
        // The same bytes, cut into lines (and a newline added to an unfinished last line):
        // already written by `outputChunk`.
    }

    public func finish() {
        out.flush()
        err.flush()
    }
}
