/// `--output raw`: steps' output goes to flow's stdout and stderr unprefixed and byte for
/// byte, as read (partial lines and lone `\r` at once, invalid UTF-8 as it is, no newline
/// added); flow adds only its own lines on stderr: failures, notes (the first signal's
/// "stopping…", a retry, a rollback) and the summary. Captured so that the journal
/// records it too; with `--no-journal` the steps write to flow's stdout and stderr
/// directly (the fastest path, like make) and nothing arrives here but `print` lines.
public final class RawReporter: RunObserver, @unchecked Sendable {
    let out = OutputWriter(fd: 1)
    let err = OutputWriter(fd: 2)
    let style: ReporterStyle
    /// The steps write to flow's stdout and stderr themselves (`--no-journal`): what they
    /// left unfinished is not seen here, and `LineStartProbe` asks the destination.
    let passThrough: Bool
    /// Whether stdout and stderr lead to the same file (one terminal, `2>&1`): then a
    /// step's unfinished stdout line leaves flow's stderr mid-line too.
    let sharedStreams: Bool
    /// Whether what went last to flow's stderr (or to its stdout, if `sharedStreams`)
    /// ended a line: flow's own lines (failures, notes, the summary) start on a line of
    /// their own, not glued to a step's unfinished one. Nil when flow cannot know: an
    /// interactive step wrote to the terminal itself, and `LineStartProbe` asks it (until
    /// a captured step's bytes land after the interactive step's and say again).
    var atLineStart: Bool? = true

    public init(color: Bool, passThrough: Bool = false) {
        style = ReporterStyle(color: color)
        self.passThrough = passThrough
        sharedStreams = LineStartProbe.sameDestination(1, 2)
    }

    public func handle(_ event: RunEvent) {
        switch event {
        case .stepState(let t):
            // An interactive step that ended wrote to the terminal itself, unseen.
            if t.step.isInteractive, t.from == .running { atLineStart = nil }
            if [.failed, .timedOut].contains(t.to), t.step.isLeaf || t.to == .timedOut || t.isGroupsOwnFailure {
                ownLine("\(style.state(t.to)) \(t.step.label) \(ReporterStyle.detail(t))")
            }
        case .note(let step, let message, _):
            // As in every text mode: above all the first signal's, which says what flow
            // does now and that a second one kills everything.
            ownLine(style.paint((step.map { "\($0.label): " } ?? "") + message, "2"))
        case .runFinished(let outcome):
            out.flush()
            ownLine(style.summary(outcome))
        default:
            break
        }
    }

    private func ownLine(_ text: String) {
        if passThrough || atLineStart == nil {
            out.flush()
            err.flush()
            LineStartProbe.separator(fd: 2).withUnsafeBytes { err.append($0) }
        } else if atLineStart == false {
            err.append(byte: 0x0A)
        }
        err.append(text + "\n")
        err.flush()
        atLineStart = true
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        // Whole lines: print steps (and flow's own line when a step cannot start).
        let writer = stream == .stdout ? out : err
        writer.append(line)
        writer.append(byte: 0x0A)
        writer.flush()
        if stream == .stderr || sharedStreams { atLineStart = true }
    }

    public func outputChunk(_ step: StepRef, _ stream: OutputChannel, chunk: UnsafeRawBufferPointer) {
        // Written as read, at once: a prompt or a progress bar shows before its line ends.
        let writer = stream == .stdout ? out : err
        writer.append(chunk)
        writer.flush()
        if stream == .stderr || sharedStreams, let last = chunk.last { atLineStart = last == 0x0A }
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
