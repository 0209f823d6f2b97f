#if canImport(Glibc)
import Glibc
#endif

/// `--output prefixed` (and `--quiet`): each output line as `name | line`, whole lines only;
/// `▶`/`✓`/`✗` lines for the start and end of steps; the summary at the end.
///
/// Step output keeps its stream (stdout or stderr); flow's own lines go to stderr, as
/// go-task and make do, so a step's stdout can be piped cleanly.
public final class PrefixedReporter: RunObserver, @unchecked Sendable {
    let out = OutputWriter(fd: 1)
    let err = OutputWriter(fd: 2)
    let style: ReporterStyle
    /// Colour of the labels on stdout lines: stdout can be a file or a pipe while stderr is
    /// the terminal (`flow run wf.yaml > build.log`), and escape codes there are garbage.
    let outStyle: ReporterStyle
    let quiet: Bool
    var log = FailureLog()
    var width = 0
    /// `label | ` per step and stream, as bytes: built once, not per line.
    var prefixes: [String: [UInt8]] = [:]
    /// `--quiet`: the failures so far, by path, in order, written at the end: an attempt
    /// that a retry makes good is no failure (its `✗` would stand alone, with no retry
    /// note and no `✓` after it in quiet output).
    var quietFailures: [(path: String, line: String)] = []
    /// What an interactive step wrote to the terminal itself, unseen: flow's next line on
    /// each stream starts a line of its own.
    var unseen = UnseenWrites()
    /// What each unnamed shell or `use` step runs, said on its `▶` line (`StepDetails`).
    let details: [String: String]

    /// `color` is for flow's own lines on stderr, `stdoutColor` for the labels of the
    /// steps' stdout lines (by default the same). `fullOutput` names the command that prints
    /// a failed step's whole output when the end of the run repeats only its last part.
    /// `details` are `StepDetails.of(plan)`.
    public init(color: Bool, stdoutColor: Bool? = nil, quiet: Bool, labelWidth: Int = 0,
                details: [String: String] = [:], fullOutput: (@Sendable (String) -> String?)? = nil) {
        log.fullOutput = fullOutput
        self.details = details
        style = ReporterStyle(color: color)
        outStyle = ReporterStyle(color: stdoutColor ?? color)
        self.quiet = quiet
        width = min(labelWidth, Self.maximumLabelWidth)
    }

    /// The width the labels of `plan`'s output lines are padded to, so that the lines
    /// start in one column: the widest label a step that runs something carries (its name;
    /// `NAME@PATH` where steps share a name; `KIND@PATH` unnamed), undo steps' too (a
    /// rollback, or `flow undo`, runs them), in terminal columns, at most 24 (a longer label is not cut, and does
    /// not push every other line right).
    public static func labelWidth(of plan: Plan) -> Int {
        let shared = Executor.sharedNameLabels(plan.root)
        var widest = 0
        func visit(_ nodes: [PlanNode]) {
            for node in nodes where node.selected {
                if !node.isGroup { widest = max(widest, DisplayWidth.columns(of: shared[node.path] ?? node.label)) }
                visit(node.children)
                visit(node.finally)
                visit(node.undo)
            }
        }
        visit(plan.root.children)
        visit(plan.root.finally)
        return min(widest, maximumLabelWidth)
    }

    /// `label | ` for a line on `stream`, coloured as that stream is.
    func prefix(_ step: StepRef, _ stream: OutputChannel) -> String {
        (stream == .stdout ? outStyle : style).paint(Self.padded(step.label, to: width), "36") + " | "
    }

    /// The widest the labels are padded to: a longer one is not cut, and does not push every
    /// other line right.
    public static let maximumLabelWidth = 24

    /// `label` padded with spaces to `width` columns (`labelWidth`); a wider one as it is.
    /// `flow logs` pads the labels of a recorded run alike.
    public static func padded(_ label: String, to width: Int) -> String {
        let columns = DisplayWidth.columns(of: label)
        return columns < width ? label + String(repeating: " ", count: width - columns) : label
    }

    public func handle(_ event: RunEvent) {
        switch event {
        case .runStarted:
            break
        case .stepState(let t):
            log.observe(t)
            unseen.observe(t)
            // Every step's start and end, whatever its kind, as the contract has it: a
            // `print`'s message is one of its output lines, and a group's (or a `use`'s)
            // lines frame its steps' and give its own time. `--quiet` keeps the failures
            // that say something of their own: a shell or delay step's, a group's own
            // time-out or failure (one because a step inside failed has that step's), the
            // ends of a rollback and the steps a resume reuses.
            let shown: Bool
            if quiet {
                let ownEnd = (t.to == .timedOut && !t.step.isLeaf) || t.isGroupsOwnFailure || t.isRollbackEnd
                let reused = t.to == .succeeded && t.isFromEarlierRun
                shown = t.step.kind == "shell" || t.step.kind == "delay" || ownEnd || reused
            } else {
                shown = true
            }
            // A retried group runs its steps again: their failures (and its own) so far
            // are made good or said again.
            if quiet, t.to == .retrying {
                let inside = t.step.path + "."
                quietFailures.removeAll { $0.path == t.step.path || $0.path.hasPrefix(inside) }
            }
            guard shown else { return }
            if quiet {
                // A step whose undo failed too: the undo step's own `✗` does not name it.
                if t.to == .failed || t.to == .timedOut || t.to == .undoFailed {
                    quietFailures.append((t.step.path, "\(style.state(t.to)) \(t.step.label) \(ReporterStyle.detail(t))\n"))
                }
                return
            }
            if t.isFromEarlierRun, let reason = t.reason {
                if t.to == .succeeded {
                    unseen.startLine(err)
                    err.append("\(style.state(.succeeded)) \(t.step.label) \(style.paint(reason, "2"))\n")
                    err.flush()
                }
                return
            }
            switch t.to {
            // Written piece by piece, not built as one string first: twice per step.
            case .running:
                out.flush()
                unseen.startLine(err)
                err.append(style.state(.running))
                err.append(byte: 0x20)
                err.append(t.step.label)
                // Said once: a later attempt's line says which attempt, after the label.
                if t.attempt > 1 {
                    err.append(" (attempt \(t.attempt))")
                } else if let detail = details[t.step.path] {
                    err.append(": ")
                    err.append(detail)
                }
                err.append(byte: 0x0A)
                err.flush()
            case .succeeded, .failed, .timedOut, .cancelled, .undone, .undoFailed:
                out.flush()
                unseen.startLine(err)
                err.append(style.state(t.to))
                err.append(byte: 0x20)
                err.append(t.step.label)
                err.append(byte: 0x20)
                err.append(ReporterStyle.detail(t))
                err.append(byte: 0x0A)
                err.flush()
            default:
                break
            }
        case .note(let step, let message, _):
            // `--quiet` keeps what flow says about the whole run (that it heard a signal and
            // how to hurry it, that it rolls back): notes about a step (retries) go.
            guard !quiet || step == nil else { return }
            out.flush()
            unseen.startLine(err)
            // The failures so far come first: a note about the whole run comes at a signal
            // or at the rollback, after which no retry makes them good, and `rolling back 1
            // step` stood above the failure it was for.
            if quiet {
                for failure in quietFailures { err.append(failure.line) }
                quietFailures.removeAll()
            }
            err.append(style.paint((step.map { "\($0.label): " } ?? "") + message, "2") + "\n")
            err.flush()
        case .runFinished(let outcome):
            out.flush()
            unseen.startLine(err)
            for failure in quietFailures { err.append(failure.line) }
            if !log.failed.isEmpty { log.replay(to: err, style: style) }
            err.append(style.summary(outcome) + "\n")
            err.flush()
        }
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        log.record(step, stream, line)
        guard !quiet else { return }
        let writer = stream == .stdout ? out : err
        if stream == .stderr { out.flush() }
        // `err` is flushed after each line of its own, `out` just above for a stderr line.
        unseen.startLine(writer)
        let key = stream == .stdout ? step.path : step.path + "\u{1}e"
        if prefixes[key] == nil { prefixes[key] = Array(prefix(step, stream).utf8) }
        prefixes[key]!.withUnsafeBytes { writer.append($0) }
        writer.append(line)
        writer.append(byte: 0x0A)
        if stream == .stderr { err.flush() }
    }

    public func outputLines(_ step: StepRef, _ stream: OutputChannel, lines: UnsafeRawBufferPointer) {
        log.record(step, lines: lines)
        guard !quiet, let base = lines.baseAddress else { return }
        let writer = stream == .stdout ? out : err
        if stream == .stderr { out.flush() }
        // `err` is flushed after each line of its own, `out` just above for a stderr line.
        unseen.startLine(writer)
        let key = stream == .stdout ? step.path : step.path + "\u{1}e"
        if prefixes[key] == nil { prefixes[key] = Array(prefix(step, stream).utf8) }
        prefixes[key]!.withUnsafeBytes { prefix in
            // Lines keep their own `\n` (and `\r\n`): prefix, then the line as it came.
            var start = 0
            while start < lines.count {
                let end = memchr(base + start, 0x0A, lines.count - start).map { base.distance(to: UnsafeRawPointer($0)) + 1 } ?? lines.count
                writer.append(prefix)
                writer.append(UnsafeRawBufferPointer(start: base + start, count: end - start))
                start = end
            }
        }
        if stream == .stderr { err.flush() }
    }

    public func endOfChunk() {
        out.flush()
    }

    public func finish() {
        out.flush()
        err.flush()
    }
}
