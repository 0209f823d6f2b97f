/// `--output grouped`: each step's output as one block after the step ends, so concurrent
/// steps never mix. Under GitHub Actions (`GITHUB_ACTIONS=true`) the blocks are
/// collapsible `::group::` log groups and failures become `::error::` annotations.
///
/// Streams are kept as in `prefixed`: a block's stdout lines go to stdout, its stderr lines
/// to stderr, and flow's own lines (block headers, notes, the summary) to stderr. Under
/// GitHub Actions a block is written whole to stdout instead: the runner reads the two
/// streams separately, so a stderr line could land outside the `::group::` meant to hold it.
public final class GroupedReporter: RunObserver, @unchecked Sendable {
    let out = OutputWriter(fd: 1)
    let err = OutputWriter(fd: 2)
    let style: ReporterStyle
    let github: Bool
    /// Each running step's lines so far, as runs of one stream.
    var buffers: [String: [(OutputChannel, [UInt8])]] = [:]
    var log = FailureLog()
    /// GitHub `::error::` annotations of failed steps, written when the run ends: a failed
    /// attempt that is retried (and may succeed) gets none.
    var annotations: [(path: String, text: String)] = []

    public init(color: Bool, github: Bool) {
        style = ReporterStyle(color: color)
        self.github = github
    }

    public func handle(_ event: RunEvent) {
        switch event {
        case .stepState(let t):
            log.finished(t)
            // A retried group runs its steps again: their failures (and its own) so far
            // are made good or said again.
            if t.to == .retrying {
                let inside = t.step.path + "."
                annotations.removeAll { $0.path == t.step.path || $0.path.hasPrefix(inside) }
            }
            // A group's own time-out gets a (bodiless) block too: nothing else would say it.
            guard t.step.isLeaf || t.to == .timedOut, t.to.isFinal, t.to != .skipped else { return }
            let detail = ReporterStyle.detail(t)
            let title = "\(t.to.symbol) \(t.step.label)\(detail.isEmpty ? "" : " (\(detail))")"
            let body = buffers.removeValue(forKey: t.step.path) ?? []
            if github {
                out.append("::group::\(title)\n")
                for (_, bytes) in body { bytes.withUnsafeBytes { out.append($0) } }
                out.append("::endgroup::\n")
                if [.failed, .timedOut].contains(t.to) {
                    annotations.append((t.step.path, "::error title=flow step \(t.step.label) failed::\(t.step.label): \(detail)\n"))
                }
                out.flush()
            } else {
                err.append(style.paint("── \(title) ──", [.failed, .timedOut].contains(t.to) ? "1;31" : "1") + "\n")
                err.flush()
                for (channel, bytes) in body {
                    let writer = channel == .stdout ? out : err
                    bytes.withUnsafeBytes { writer.append($0) }
                    writer.flush()
                }
            }
        case .note(let step, let message):
            out.flush()
            err.append((step.map { "\($0.label): " } ?? "") + message + "\n")
            err.flush()
        case .runFinished(let outcome):
            for annotation in annotations { out.append(annotation.text) }
            out.flush()
            err.append(style.summary(outcome) + "\n")
            err.flush()
        default:
            break
        }
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        // A `print` step's line (or flow's own about a step), without its line break.
        // Mutated in place (no copy of the step's buffer per line).
        Self.append(line, stream, to: &buffers[step.path, default: []], endingLine: true)
    }

    public func outputLines(_ step: StepRef, _ stream: OutputChannel, lines: UnsafeRawBufferPointer) {
        // A shell step's lines, kept as they came, each with its own `\n` or `\r\n` (cut
        // into lines, a `\r\n` would lose its `\r`, as prefixed output does not).
        Self.append(lines, stream, to: &buffers[step.path, default: []], endingLine: false)
    }

    /// Adds `bytes` to a step's runs, and a `\n` after them if `endingLine`.
    private static func append(_ bytes: UnsafeRawBufferPointer, _ stream: OutputChannel, to runs: inout [(OutputChannel, [UInt8])],
                               endingLine: Bool) {
        if runs.last?.0 != stream { runs.append((stream, [])) }
        runs[runs.count - 1].1.append(contentsOf: bytes)
        if endingLine { runs[runs.count - 1].1.append(0x0A) }
    }

    public func finish() {
        out.flush()
        err.flush()
    }

    /// The steps still running were just killed: their blocks are written as they stand.
    public func abandon(exitStatus: Int32) {
        for (_, runs) in buffers.sorted(by: { $0.key < $1.key }) {
            if github { out.append("::group::killed\n") }
            for (channel, bytes) in runs {
                let writer = github || channel == .stdout ? out : err
                bytes.withUnsafeBytes { writer.append($0) }
                writer.flush()
            }
            if github { out.append("::endgroup::\n") }
        }
        buffers.removeAll()
        finish()
    }
}
