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
///
/// A step's output is held in memory up to `HeldOutput.memoryLimit`, the rest in a
/// temporary file (`OutputSpill`): a step that prints a gigabyte must not make flow hold
/// a gigabyte. If that file cannot be written, flow says so once and holds the rest in
/// memory: the blocks stay whole.
public final class GroupedReporter: RunObserver, @unchecked Sendable {
    let out: OutputWriter
    let err: OutputWriter
    let style: ReporterStyle
    let github: Bool
    let quiet: Bool
    /// Each running step's output so far.
    var buffers: [String: HeldOutput] = [:]
    /// Bytes the held blocks (`buffers` and `quietBlocks`) keep in memory, together.
    var heldTotal = 0
    let spill: OutputSpill
    /// Whether flow has said that spilling failed (it says so once).
    var spillFailureSaid = false
    /// GitHub `::error::` annotations of failed steps, written when the run ends: a failed
    /// attempt that is retried (and may succeed) gets none. Kept as the ends they say until
    /// then: a retry called off makes the failure it waited on an allowed one (a warning).
    var annotations: [(path: String, end: StepTransition)] = []
    /// `--quiet`: the blocks of the failures so far, in order, written when the run ends
    /// (a retry drops those it runs again). Kept as the ends they say, titled when written:
    /// a retry called off makes the failure it waited on an allowed one, as in `annotations`.
    var quietBlocks: [(path: String, end: StepTransition, body: HeldOutput)] = []
    /// What an interactive step wrote to the terminal itself, unseen (its block is empty):
    /// flow's next line on each stream starts a line of its own.
    var unseen = UnseenWrites()
    /// What each unnamed shell or `use` step runs, said in its block's title (`StepDetails`).
    let details: [String: String]

    /// The nearest named step around each step, by path (`StepDetails.places`), said in
    /// the annotation of a step whose label is its kind or name and path.
    let places: [String: String]

    /// `details` are `StepDetails.of(plan)`, `places` `StepDetails.places(of: plan)`.
    public convenience init(color: Bool, github: Bool, quiet: Bool = false, details: [String: String] = [:],
                            places: [String: String] = [:]) {
        self.init(color: color, github: github, quiet: quiet, stdout: 1, stderr: 2, spill: OutputSpill(), details: details,
                  places: places)
    }

    /// Writes to `stdout` and `stderr` (descriptors) and spills to `spill`: a test's.
    init(color: Bool, github: Bool, quiet: Bool, stdout: Int32, stderr: Int32, spill: OutputSpill,
         details: [String: String] = [:], places: [String: String] = [:]) {
        self.details = details
        self.places = places
        out = OutputWriter(fd: stdout)
        err = OutputWriter(fd: stderr)
        self.spill = spill
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
                for block in quietBlocks where retried(block.path) {
                    spill.release(block.body.extents)
                    heldTotal -= block.body.heldInMemory
                }
                quietBlocks.removeAll { retried($0.path) }
            }
            // A group's own time-out or failure (a `use` given a value not `allowed`) gets a
            // (bodiless) block and annotation too: nothing else would say it. So does a group
            // a rollback reverses (and, under `flow undo`, its record from the earlier run).
            guard t.step.isLeaf || t.to == .timedOut || t.isGroupsOwnFailure || t.isRollbackEnd,
                  t.to.isFinal, t.to != .skipped else { return }
            var body = buffers.removeValue(forKey: t.step.path) ?? HeldOutput()
            heldTotal -= body.heldInMemory
            let failed = [.failed, .timedOut].contains(t.to)
            if github, failed { annotations.append((t.step.path, t)) }
            if quiet {
                if failed {
                    // Held until the run ends, maybe with many more: not in memory, if large
                    // (its buffer's capacity included).
                    if body.heldInMemory >= Self.quietMemoryLimit || heldTotal + body.heldInMemory > Self.totalMemoryLimit {
                        body.spillTail(to: spill, keepingCapacity: false)
                        sayIfSpillFailed()
                    }
                    heldTotal += body.heldInMemory
                    quietBlocks.append((t.step.path, t, body))
                } else {
                    spill.release(body.extents)
                }
                return
            }
            writeBlock(title: title(t), failed: failed, body: body)
        case .note(let step, let message, let allowing):
            for path in allowing {
                for i in annotations.indices where annotations[i].path == path { annotations[i].end.step.failureAllowed = true }
                for i in quietBlocks.indices where quietBlocks[i].path == path { quietBlocks[i].end.step.failureAllowed = true }
            }
            // `--quiet` keeps what flow says about the whole run (that it heard a signal and
            // how to hurry it, that it rolls back): notes about a step (retries) go.
            guard !quiet || step == nil else { return }
            out.flush()
            unseen.startLine(err)
            err.append((step.map { "\($0.label): " } ?? "") + message + "\n")
            err.flush()
        case .runFinished(let outcome):
            for block in quietBlocks { writeBlock(title: title(block.end), failed: true, body: block.body) }
            quietBlocks.removeAll()
            heldTotal = 0
            if !annotations.isEmpty { unseen.startLine(out, after: err, command: true) }
            for annotation in annotations { out.append(Self.annotation(annotation.end, place: place(of: annotation.end.step))) }
            out.flush()
            unseen.startLine(err)
            err.append(style.summary(outcome) + "\n")
            err.flush()
        default:
            break
        }
    }

    /// The title of the block of the step's end `t` (an unnamed step's label says what it
    /// runs: `details`).
    func title(_ t: StepTransition) -> String {
        // A step `flow resume` or `flow undo` took from the earlier run did not run now:
        // say where it comes from, as `prefixed` does, not a time that reads as a run.
        let reused = t.to == .succeeded && t.isFromEarlierRun
        var detail = reused ? t.reason! : ReporterStyle.detail(t, markAllowed: false)
        // In the parentheses of the title, not a second pair inside them.
        if t.isAllowedFailure { detail += (detail.isEmpty ? "" : "; ") + ReporterStyle.allowedMark }
        // A retried step's later attempts are blocks of their own: said in the title, as
        // `prefixed` says it at their start (three blocks read `✗ flaky (exit 1 0.3s)`).
        if t.attempt > 1, t.step.isLeaf, !reused { detail = "attempt \(t.attempt)" + (detail.isEmpty ? "" : "; " + detail) }
        let label = details[t.step.path].map { "\(t.step.label): \($0)" } ?? t.step.label
        return "\(t.to.symbol) \(label)\(detail.isEmpty ? "" : " (\(detail))")"
    }

    /// The `::error::` annotation of a step that ended failed; `::warning::` for a failure
    /// `continue_on_error` allowed, which does not fail the job (as GitHub Actions' own
    /// `continue-on-error` steps do not). Escaped: a label or reason holding `%`, a line
    /// break or `:` would end or forge the command.
    static func annotation(_ t: StepTransition, place: String? = nil) -> String {
        let allowed = t.isAllowedFailure
        let label = t.step.label + (place.map { " (in \(ControlEscaping.escaped($0)))" } ?? "")
        let title = GitHubCommandEscaping.property("flow step \(label) failed\(allowed ? " (allowed)" : "")")
        let command = allowed ? "warning" : "error"
        return "::\(command) title=\(title)::\(GitHubCommandEscaping.data("\(label): \(ReporterStyle.detail(t))"))\n"
    }

    /// The named step around `step` for its annotation, when its label is not a name of
    /// its own alone (`test@1.2.2`, `shell@2.1`): a unique name says which step it is.
    func place(of step: StepRef) -> String? {
        step.label.contains("@") ? places[step.path] : nil
    }

    /// A kept `--quiet` block spills what it holds in memory from this much on: a run of
    /// many failures holds them all until it ends.
    static let quietMemoryLimit = 64 << 10

    /// What all blocks together may hold in memory (`heldTotal`): past it, the block being
    /// added to is spilled whatever its size. Each step's own limit (1 MiB) does not bound
    /// the run: 1,000 concurrent steps each printing just under it held about a gigabyte.
    static let totalMemoryLimit = 64 << 20

    /// Adds output of `step` to its block, keeping `heldTotal` and spilling the block when
    /// all blocks together hold more than `limit` in memory. In place: no copy of the
    /// step's buffer per line.
    func hold(_ step: StepRef, _ bytes: UnsafeRawBufferPointer, _ stream: OutputChannel, endingLine: Bool,
              limit: Int = GroupedReporter.totalMemoryLimit) {
        Self.update(&buffers[step.path, default: HeldOutput(label: step.label)]) { held in
            let before = held.heldInMemory
            held.append(bytes, stream, endingLine: endingLine, spill: spill)
            heldTotal += held.heldInMemory - before
            if heldTotal > limit {
                let kept = held.heldInMemory
                held.spillTail(to: spill)
                heldTotal -= kept - held.heldInMemory
            }
        }
        sayIfSpillFailed()
    }

    private static func update(_ held: inout HeldOutput, _ body: (inout HeldOutput) -> Void) {
        body(&held)
    }

    /// One step's block: its header, then its lines on their streams (under GitHub
    /// Actions, a `::group::` on stdout).
    private func writeBlock(title: String, failed: Bool, body: HeldOutput) {
        var lost: (lost: Int, errno: Int32)?
        if github {
            // `::group::` is a command only at the start of a line.
            unseen.startLine(out, after: err, command: true)
            out.append("::group::\(GitHubCommandEscaping.data(title))\n")
            lost = body.replay(from: spill) { _, bytes in out.append(bytes) }
            out.append("::endgroup::\n")
            out.flush()
        } else {
            unseen.startLine(err, after: out)
            err.append(style.paint("── \(title) ──", failed ? "1;31" : "1") + "\n")
            err.flush()
            lost = body.replay(from: spill) { channel, bytes in
                let writer = channel == .stdout ? out : err
                unseen.startLine(writer)
                writer.append(bytes)
                writer.flush()
            }
        }
        spill.release(body.extents)
        if let lost { sayLost(lost, of: body.label) }
    }

    /// Some of a block could not be read back from the spill file (an I/O error): the rest
    /// was written, and this says what is missing, in place of it.
    private func sayLost(_ lost: (lost: Int, errno: Int32), of step: String) {
        out.flush()
        unseen.startLine(err)
        err.append("warning: \(lost.lost) bytes of \(step)'s output could not be read back from its temporary file "
                   + "(\(SpawnError.message(lost.errno))); the journal has them unless --no-journal\n")
        err.flush()
    }

    private func sayIfSpillFailed() {
        guard !spillFailureSaid, let failure = spill.failure else { return }
        spillFailureSaid = true
        out.flush()
        unseen.startLine(err)
        err.append("warning: --output grouped: \(failure); the steps' output is held in memory until their blocks are written\n")
        err.flush()
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        // A `print` step's line (or flow's own about a step), without its line break.
        // Mutated in place (no copy of the step's buffer per line).
        hold(step, line, stream, endingLine: true)
    }

    public func outputLines(_ step: StepRef, _ stream: OutputChannel, lines: UnsafeRawBufferPointer) {
        // A shell step's lines, kept as they came, each with its own `\n` or `\r\n` (cut
        // into lines, a `\r\n` would lose its `\r`, as prefixed output does not).
        hold(step, lines, stream, endingLine: false)
    }

    public func finish() {
        out.flush()
        err.flush()
    }

    /// The steps still running were just killed: their blocks are written as they stand
    /// (with `--quiet`, not: a killed step ends `cancelled`, not failed).
    public func abandon(exitStatus: Int32) {
        for (_, held) in buffers.sorted(by: { $0.key < $1.key }) where !quiet {
            if github { out.append("::group::killed\n") }
            let lost = held.replay(from: spill) { channel, bytes in
                let writer = github || channel == .stdout ? out : err
                writer.append(bytes)
                writer.flush()
            }
            if github { out.append("::endgroup::\n") }
            if let lost { sayLost(lost, of: held.label) }
        }
        buffers.removeAll()
        heldTotal = quietBlocks.reduce(0) { $0 + $1.body.heldInMemory }
        finish()
    }
}
