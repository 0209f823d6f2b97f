/// `--output grouped`: each step's output as one block after the step ends, so concurrent
/// steps never mix. Under GitHub Actions (`GITHUB_ACTIONS=true`) the blocks are
/// collapsible `::group::` log groups and failures become `::error::` annotations.
///
/// Streams are kept as in `prefixed`: a block's stdout lines go to stdout, its stderr lines
/// to stderr, and flow's own lines (block headers, notes, the summary) to stderr. Under
/// GitHub Actions a block is written whole to stdout instead: the runner reads the two
/// streams separately, so a stderr line could land outside the `::group::` meant to hold it.
///
/// With `--quiet`, only the blocks of steps that failed in the end, written when the run
/// ends (a failed attempt may yet be made good by a retry), and the summary.
public final class GroupedReporter: RunObserver, @unchecked Sendable {
    let out = OutputWriter(fd: 1)
    let err = OutputWriter(fd: 2)
    let style: ReporterStyle
    let github: Bool
    let quiet: Bool
    /// Each running step's lines so far, as runs of one stream.
    var buffers: [String: [(OutputChannel, [UInt8])]] = [:]
    /// GitHub `::error::` annotations of failed steps, written when the run ends: a failed
    /// attempt that is retried (and may succeed) gets none.
    var annotations: [(path: String, text: String)] = []
    /// `--quiet`: the blocks of the failures so far, in order, written when the run ends
    /// (a retry drops those it runs again).
    var quietBlocks: [(path: String, title: String, body: [(OutputChannel, [UInt8])])] = []
    /// What an interactive step wrote to the terminal itself, unseen (its block is empty):
    /// flow's next line on each stream starts a line of its own.
    var unseen = UnseenWrites()

    public init(color: Bool, github: Bool, quiet: Bool = false) {
        style = ReporterStyle(color: color)
        self.github = github
        self.quiet = quiet
    }

    public func handle(_ event: RunEvent) {
        switch event {
        case .stepState(let t):
            unseen.observe(t)
            // A retried group runs its steps again: their failures (and its own) so far
            // are made good or said again.
            if t.to == .retrying {
                let inside = t.step.path + "."
                let retried = { (path: String) in path == t.step.path || path.hasPrefix(inside) }
                annotations.removeAll { retried($0.path) }
                quietBlocks.removeAll { retried($0.path) }
            }
            // A group's own time-out or failure (a `use` given a value not `allowed`) gets a
            // (bodiless) block and annotation too: nothing else would say it. So does a group
            // a rollback reverses (and, under `flow undo`, its record from the earlier run).
            guard t.step.isLeaf || t.to == .timedOut || t.isGroupsOwnFailure || t.isRollbackEnd,
                  t.to.isFinal, t.to != .skipped else { return }
            // A step `flow resume` or `flow undo` took from the earlier run did not run now:
            // say where it comes from, as `prefixed` does, not a time that reads as a run.
            let reused = t.to == .succeeded && t.isFromEarlierRun
            var detail = reused ? t.reason! : ReporterStyle.detail(t, markAllowed: false)
            // In the parentheses of the title, not a second pair inside them.
            if t.isAllowedFailure { detail += (detail.isEmpty ? "" : "; ") + ReporterStyle.allowedMark }
            let title = "\(t.to.symbol) \(t.step.label)\(detail.isEmpty ? "" : " (\(detail))")"
            let body = buffers.removeValue(forKey: t.step.path) ?? []
            let failed = [.failed, .timedOut].contains(t.to)
            if github, failed { annotations.append((t.step.path, Self.annotation(t))) }
            if quiet {
                if failed { quietBlocks.append((t.step.path, title, body)) }
                return
            }
            writeBlock(title: title, failed: failed, body: body)
        case .note(let step, let message):
            // `--quiet` keeps what flow says about the whole run (that it heard a signal and
            // how to hurry it, that it rolls back): notes about a step (retries) go.
            guard !quiet || step == nil else { return }
            out.flush()
            unseen.startLine(err)
            err.append((step.map { "\($0.label): " } ?? "") + message + "\n")
            err.flush()
        case .runFinished(let outcome):
            for block in quietBlocks { writeBlock(title: block.title, failed: true, body: block.body) }
            quietBlocks.removeAll()
            if !annotations.isEmpty { unseen.startLine(out, after: err) }
            for annotation in annotations { out.append(annotation.text) }
            out.flush()
            unseen.startLine(err)
            err.append(style.summary(outcome) + "\n")
            err.flush()
        default:
            break
        }
    }

    /// The `::error::` annotation of a step that ended failed; `::warning::` for a failure
    /// `continue_on_error` allowed, which does not fail the job (as GitHub Actions' own
    /// `continue-on-error` steps do not). Escaped: a label or reason holding `%`, a line
    /// break or `:` would end or forge the command.
    static func annotation(_ t: StepTransition) -> String {
        let allowed = t.isAllowedFailure
        let title = GitHubCommandEscaping.property("flow step \(t.step.label) failed\(allowed ? " (allowed)" : "")")
        let command = allowed ? "warning" : "error"
        return "::\(command) title=\(title)::\(GitHubCommandEscaping.data("\(t.step.label): \(ReporterStyle.detail(t))"))\n"
    }

    /// One step's block: its header, then its lines on their streams (under GitHub
    /// Actions, a `::group::` on stdout).
    private func writeBlock(title: String, failed: Bool, body: [(OutputChannel, [UInt8])]) {
        if github {
            // `::group::` is a command only at the start of a line.
            unseen.startLine(out, after: err)
            out.append("::group::\(GitHubCommandEscaping.data(title))\n")
            for (_, bytes) in body { bytes.withUnsafeBytes { out.append($0) } }
            out.append("::endgroup::\n")
            out.flush()
        } else {
            unseen.startLine(err, after: out)
            err.append(style.paint("── \(title) ──", failed ? "1;31" : "1") + "\n")
            err.flush()
            for (channel, bytes) in body {
                let writer = channel == .stdout ? out : err
                unseen.startLine(writer)
                bytes.withUnsafeBytes { writer.append($0) }
                writer.flush()
            }
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

    /// The steps still running were just killed: their blocks are written as they stand
    /// (with `--quiet`, not: a killed step ends `cancelled`, not failed).
    public func abandon(exitStatus: Int32) {
        for (_, runs) in buffers.sorted(by: { $0.key < $1.key }) where !quiet {
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
