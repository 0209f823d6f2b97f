#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// `--output tty`: a live tree of the run on the terminal — the state of every step, elapsed
/// times (after a failed step's reason, `exit 3`), the last line of each running step and a
/// finished/total count. The finished tree
/// stays on screen, followed by the output of failed steps (see `FailureLog`) and the summary.
///
/// Lines that `print` steps print go above the tree and stay. While the run goes on, a tree
/// taller than the terminal lists only running and failed steps and says how many rows it
/// leaves out; its final frame is the whole tree, once. Rows are cut to the width.
///
/// An interactive step has the terminal while it runs: the tree is not redrawn then (a
/// redraw would erase what the step wrote, a prompt included); its last frame, showing
/// the step running, stays above the step's output, and the live tree goes on below that
/// output, on a line of its own, once the step ends.
public final class TTYReporter: RunObserver, @unchecked Sendable {
    struct Row {
        var path: String
        var depth: Int
        /// The step's name, or for an unnamed step its command or message: text from the
        /// workflow, control characters escaped as `flow plan` shows them.
        var label: String
        var labelWidth: Int
        var isLeaf: Bool
        /// The step's own `retry`: a failed attempt it will run again is no finish yet.
        var retry: RetryPolicy?
        var state = StepState.pending
        /// Whether `finished` counts the step (a leaf) now.
        var counted = false
        /// A step `flow undo` left alone (`StepTransition.notUndoneReason`): shown so, and
        /// neither finished nor in the total, as the undo's summary leaves it out.
        var leftAlone = false
        var started: Double?
        var elapsed: Double?
        /// Where a step `flow resume` or `flow undo` took from the earlier run comes from
        /// (`reused from run ID`), shown instead of a time: it did not run now.
        var origin: String?
        /// Why a step failed or timed out (`exit 3`, `signal 9`, `timed out after 30s`), as
        /// `prefixed` says it on the step's end line: shown before its time. Not for a group
        /// that failed because a step inside did (that step's row says why) or by itself
        /// (its reason is above the tree).
        var reason: String?
        /// The last line the step printed, as read: made plain and cut to the room in its
        /// row (`shownLine`) only when a redraw shows it, not for every line a chatty step
        /// prints, nor at every redraw.
        var lastLine: [UInt8] = []
        /// The line each stream (stdout, stderr) is writing, not ended yet; the one of
        /// `latestStream`, if any, shows rather than `lastLine`: it came after it.
        var unfinished = [UnfinishedLine(), UnfinishedLine()]
        var latestStream = 0
        var lineChanged = false
        var shownLine = (text: "", width: 0, room: -1)
    }

    let out = OutputWriter(fd: 2)
    let style: ReporterStyle
    let lock = Mutex(())
    var rows: [Row] = []
    var index: [String: Int] = [:]
    /// The rows a live frame taller than the terminal lists (running, retrying, failed,
    /// timed out, undoing), in tree order; kept as states change, so that a redraw takes its
    /// last ones rather than searching the whole tree: with that search at every event, a run
    /// of 10,000 steps spent 25 s (debug build) redrawing.
    var listed: [Int] = []
    var drawn = 0
    var finished = 0
    var total = 0
    /// The contract promises the full output of failed steps: what leaves memory is spilled.
    var log = FailureLog(spill: OutputSpill())
    var done = false
    /// Interactive steps running (one at most: no other shell step runs beside one).
    var interactive = 0
    /// What an interactive step wrote to the terminal itself, unseen: flow's next line
    /// starts a line of its own.
    var unseen = UnseenWrites()
    var ticker: Task<Void, Never>?
    /// How many signals flow has had: one during the replay of failed steps' output stops it.
    let signalCount: (@Sendable () -> Int)?

    /// `fullOutput` names the command that prints a failed step's whole output when the
    /// end of the run repeats only its last part.
    /// `signalCount` says how many signals flow has had (`RunCancellation.requests`).
    public init(plan: Plan, color: Bool, fullOutput: (@Sendable (String) -> String?)? = nil,
                signalCount: (@Sendable () -> Int)? = nil) {
        log.fullOutput = fullOutput
        self.signalCount = signalCount
        style = ReporterStyle(color: color)
        func add(_ node: PlanNode, depth: Int) {
            index[node.path] = rows.count
            let label = ControlEscaping.escaped(node.summary)
            rows.append(Row(path: node.path, depth: depth, label: label, labelWidth: DisplayWidth.rowColumns(of: label),
                            isLeaf: !node.isGroup, retry: node.retry))
            if !node.isGroup { total += 1 }
            for child in node.children { add(child, depth: depth + 1) }
            for child in node.finally { add(child, depth: depth + 1) }
        }
        for child in plan.root.children + plan.root.finally { add(child, depth: 0) }
    }

    func start() {
        ticker = Task.detached { [weak self] in
            while let self, !Task.isCancelled {
                try? await DispatchPool.sleep(for: .milliseconds(100))
                self.lock.withLock { _ in if !self.done { self.redraw() } }
            }
        }
    }

    public func handle(_ event: RunEvent) {
        lock.withLock { _ in
            switch event {
            case .runStarted:
                start()
                redraw()
            case .stepState(let t):
                log.observe(t)
                unseen.observe(t)
                if t.step.isInteractive, t.from == .running { interactive -= 1 }
                defer {
                    if t.step.isInteractive, t.to == .running {
                        // Its frame (the step running) was just drawn: it stays, and the
                        // step writes below it.
                        interactive += 1
                        drawn = 0
                    }
                }
                guard let i = index[t.step.path], !t.step.isUndo else {
                    if t.step.isUndo, t.to.isFinal || t.to == .undone { clear(); out.append("\(style.state(t.to)) undo \(t.step.label) \(ReporterStyle.detail(t))\n"); redraw() }
                    return
                }
                if t.isGroupsOwnFailure, let reason = t.reason {
                    // Its row shows `✗` and a time, as a failed step's, but nothing inside
                    // it failed to say why: the reason goes above the tree, and stays.
                    clear()
                    out.append(style.paint("\(ControlEscaping.escaped(t.step.label)): \(ControlEscaping.escaped(reason))", "2") + "\n")
                }
                setState(i, t.to)
                if t.to == .skipped, t.reason == StepTransition.notUndoneReason { leaveAlone(from: i) }
                rows[i].origin = t.to == .succeeded && t.isFromEarlierRun ? t.reason : nil
                rows[i].reason = (t.to == .failed && rows[i].isLeaf) || t.to == .timedOut ? Self.reason(of: t) : nil
                // A group whose failure `continue_on_error` allowed says so on its row: its
                // `✗` would otherwise read as the run's failure.
                if t.to == .failed, !rows[i].isLeaf, t.isAllowedFailure { rows[i].reason = ReporterStyle.allowedMark }
                if t.to == .running, rows[i].started == nil { rows[i].started = Timestamp.monotonic() }
                // An attempt's unfinished line was delivered whole when it ended.
                if t.to == .running { rows[i].unfinished = [UnfinishedLine(), UnfinishedLine()] }
                if let elapsed = t.elapsed { rows[i].elapsed = elapsed }
                if rows[i].isLeaf {
                    count(i, t)
                } else if t.to.isFinal, !Self.isReplayedSuccess(t) {
                    // Also when the group is undone: its undo reverses the steps inside it
                    // that succeeded, which get no `undone` of their own (in `flow undo`,
                    // they are finished with it, not at their replayed success).
                    settle(below: i)
                }
                if t.to == .skipped { markSkipped(below: i) }
                redraw()
            case .note(let step, let message, let allowing):
                // A retry called off: the failure its row shows is the step's end, and an
                // allowed one (`Executor.calledOff`), marked as one that ended so is.
                for path in allowing {
                    guard let i = index[path], rows[i].state == .failed || rows[i].state == .timedOut else { continue }
                    let mark = ReporterStyle.allowedMark
                    rows[i].reason = rows[i].isLeaf || rows[i].state == .timedOut ? (rows[i].reason.map { "\($0) (\(mark))" } ?? "(\(mark))") : mark
                }
                clear()
                out.append(style.paint((step.map { "\($0.label): " } ?? "") + message, "2") + "\n")
                redraw()
            case .runFinished(let outcome):
                done = true
                ticker?.cancel()
                // Whatever was still expected (a retry the run's end called off) is not now.
                finished = rows.reduce(0) { $0 + ($1.isLeaf && !$1.leftAlone && $1.state.isFinal ? 1 : 0) }
                redraw(final: true)
                // A signal from now on stops the replay (one before it, which ended the
                // run, does not: its failed steps' output is what the user wants to see).
                let signals = signalCount, before = signals?() ?? 0
                log.replay(to: out, style: style, stopped: { (signals?() ?? 0) > before })
                out.append(style.summary(outcome) + "\n")
                out.flush()
            }
        }
    }

    /// The reason part of `ReporterStyle.detail` (without the time, which the row has of
    /// its own), control characters escaped as in labels: it may quote the workflow.
    static func reason(of t: StepTransition) -> String? {
        var end = t
        end.elapsed = nil
        let text = ReporterStyle.detail(end)
        return text.isEmpty ? nil : ControlEscaping.escaped(text)
    }

    /// A skipped group's steps never get events of their own.
    func markSkipped(below i: Int) {
        var j = i + 1
        while j < rows.count, rows[j].depth > rows[i].depth {
            if rows[j].state == .pending {
                rows[j].state = .skipped
                if rows[j].isLeaf { setCounted(j, true) }
            }
            j += 1
        }
    }

    /// Row `i`, and the steps inside it, are ones `flow undo` left alone: out of the total,
    /// as the undo's summary counts only what it reversed or tried. They read `5/5 steps
    /// finished` for an undo that reversed 2, the three left alone among them.
    func leaveAlone(from i: Int) {
        var j = i
        repeat {
            if !rows[j].leftAlone {
                if rows[j].isLeaf {
                    setCounted(j, false)
                    total -= 1
                }
                rows[j].leftAlone = true
            }
            j += 1
        } while j < rows.count && rows[j].depth > rows[i].depth
    }

    /// Counts leaf `i` as finished once it has ended for good, each step once: not at a
    /// failed attempt its `retry` will run again (the executor says so only in a note),
    /// not again when it is undone (`undone`, `undo_failed`), and no longer when it runs
    /// again (its group's retry runs it anew). Undo steps have no row: they are not among
    /// the total. In `flow undo`, a step it reverses is finished once reversed, not at the
    /// success recorded first as the run left it (`succeeded in run ID`): the count is the
    /// undo's progress.
    func count(_ i: Int, _ t: StepTransition) {
        switch t.to {
        case .succeeded where Self.isReplayedSuccess(t): break
        case .running, .retrying: setCounted(i, false)
        case .failed, .timedOut: setCounted(i, !Self.willRetry(rows[i].retry, after: t))
        case .pending, .undoing: break
        default: setCounted(i, true)
        }
    }

    /// Whether `t` is the success `flow undo` records first for a step it reverses, as the
    /// run left it (`succeeded in run ID`), rather than anything the undo did.
    static func isReplayedSuccess(_ t: StepTransition) -> Bool {
        t.to == .succeeded && t.reason?.hasPrefix(StepTransition.reversedReason(from: "")) == true
    }

    /// Whether the executor retries the step after the failed attempt `t`, as it decides:
    /// attempts left, and a time-out or an exit code `retry` takes. It may still not (the
    /// run is stopping, the failure is certain to repeat): `settle` and the run's end
    /// count the step then.
    static func willRetry(_ policy: RetryPolicy?, after t: StepTransition) -> Bool {
        guard let policy, t.attempt <= policy.limit else { return false }
        return t.to == .timedOut || policy.retries(exitCode: t.exitCode)
    }

    /// Group `i` ended: no step inside it is retried any more, so a failed one that was
    /// expected to be counts now.
    func settle(below i: Int) {
        var j = i + 1
        while j < rows.count, rows[j].depth > rows[i].depth {
            if rows[j].isLeaf, rows[j].state.isFinal { setCounted(j, true) }
            j += 1
        }
    }

    /// Sets row `i`'s state, and whether `listed` has it.
    func setState(_ i: Int, _ state: StepState) {
        rows[i].state = state
        // The first row in `listed` not before `i`.
        var low = 0, high = listed.count
        while low < high {
            let mid = (low + high) / 2
            if listed[mid] < i { low = mid + 1 } else { high = mid }
        }
        let isListed = low < listed.count && listed[low] == i
        if Self.isListed(state) {
            if !isListed { listed.insert(i, at: low) }
        } else if isListed {
            listed.remove(at: low)
        }
    }

    /// Whether a live frame taller than the terminal lists a row in `state`.
    static func isListed(_ state: StepState) -> Bool {
        switch state {
        case .running, .retrying, .failed, .timedOut, .undoing: true
        default: false
        }
    }

    func setCounted(_ i: Int, _ counted: Bool) {
        guard rows[i].counted != counted, !(counted && rows[i].leftAlone) else { return }
        rows[i].counted = counted
        finished += counted ? 1 : -1
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        lock.withLock { _ in
            log.record(step, stream, line)
            if step.kind == "print" {
                clear()
                out.append(line)
                out.append(byte: 0x0A)
                redraw()
            } else if let i = index[step.path] {
                rows[i].lastLine.removeAll(keepingCapacity: true)
                rows[i].lastLine.append(contentsOf: line)
                rows[i].lineChanged = true
            }
        }
    }

    /// A shell step's output as read: its unfinished line shows in the tree at once (a
    /// prompt, a `\r` progress bar), not only once its `\n` comes.
    public func outputChunk(_ step: StepRef, _ stream: OutputChannel, chunk: UnsafeRawBufferPointer) {
        lock.withLock { _ in
            guard !step.isUndo, let i = index[step.path] else { return }
            let s = stream == .stdout ? 0 : 1
            rows[i].unfinished[s].feed(chunk)
            rows[i].latestStream = s
            rows[i].lineChanged = true
        }
    }

    public func finish() {
        lock.withLock { _ in out.flush() }
    }

    /// Writes `text`, lines of flow's own that come from outside the run's events (the
    /// journal's `error: …; this run is not recorded`, the second signal's `flow: second
    /// signal; killed every step`), above the live tree, as a note goes. Written to stderr
    /// past the reporter, such a line landed below the frame, and the next redraw, which
    /// moves up as many rows as it drew, erased the line and left the frame's top rows.
    public func interject(_ text: String) {
        lock.withLock { _ in
            clear()
            out.append(text)
            if done { out.flush() } else { redraw() }
        }
    }

    var terminalSize: (width: Int, height: Int) {
        var size = winsize()
        if ioctl(2, UInt(TIOCGWINSZ), &size) == 0, size.ws_col > 0 {
            return (Int(size.ws_col), Int(size.ws_row))
        }
        return (80, 24)
    }

    /// Makes room for what comes next (a line above the tree, a new frame): erases the
    /// live frame, or after an interactive step starts a line of its own.
    func clear() {
        if drawn > 0 { out.append("\u{1B}[\(drawn)F\u{1B}[J") }
        drawn = 0
        unseen.startLine(out)
    }

    /// Draws the tree below the cursor, in place of the frame drawn before (`clear`).
    ///
    /// A live frame takes at most the terminal's height less one row: the cursor's row
    /// below it must stay on screen, or the move up to erase it (`ESC[nF`) stops at the
    /// top of the screen and the rows above stay there, one more copy at every redraw.
    /// A taller tree lists its running and failed steps (the last ones) and how many rows
    /// it leaves out. The `final` frame is the whole tree, written once and not erased: it
    /// scrolls into the terminal's history, where it stays.
    func redraw(final: Bool = false) {
        // The terminal is an interactive step's (the run's end draws all the same).
        guard interactive == 0 || final else { return }
        let (width, height) = terminalSize
        clear()
        let now = Timestamp.monotonic()
        // The last column stays free: a character there leaves the cursor waiting to wrap,
        // and terminals differ in what the next line break does then.
        let columns = max(width - 1, 1)
        let room = height - 1
        var lines: [String] = []
        if final || rows.count + 1 <= room {
            lines.reserveCapacity(rows.count + 1)
            for i in rows.indices { lines.append(line(at: i, columns: columns, now: now)) }
        } else {
            // The rows left for steps once the count and `… N more` have theirs: the last
            // of the listed ones, so that a redraw does a screenful, whatever the tree's size.
            let visible = listed.suffix(max(room - 2, 0))
            for i in visible { lines.append(line(at: i, columns: columns, now: now)) }
            if room >= 2 {
                lines.append(style.paint(DisplayWidth.fit("… \(rows.count - visible.count) more", in: columns).text, "2"))
            }
        }
        lines.append(style.paint(DisplayWidth.fit("\(finished)/\(total) steps finished", in: columns).text, "1"))
        for line in lines { out.append(line + "\n") }
        drawn = final ? 0 : lines.count
        out.flush()
    }

    /// Row `i` of the tree in at most `columns` terminal columns: indentation, state,
    /// label, time, and for a running step its last line in the room left. Each part is
    /// measured in columns (a CJK character is two) and cut to what is left: a row wider
    /// than the terminal wraps, and the redraw, which moves up as many rows as it wrote,
    /// leaves the extra one on screen.
    func line(at i: Int, columns: Int, now: Double) -> String {
        let row = rows[i]
        // A deep tree in a narrow terminal still leaves room for the labels.
        let indent = min(row.depth * 2, columns / 2)
        guard columns >= indent + 2 else { return "" }
        // Every state symbol is one column wide.
        var text = String(repeating: " ", count: indent) + style.state(row.state) + " "
        var left = columns - indent - 2
        var time = ""
        if row.leftAlone {
            // As `flow show` of the undo lists it (`○ c  [left alone]`), not as a skip.
            time = " left alone"
        } else if row.state != .skipped {
            if let origin = row.origin {
                time = " " + origin
            } else if let elapsed = row.elapsed, row.state.isFinal {
                time = " " + formatElapsed(elapsed)
            } else if let started = row.started, !row.state.isFinal {
                time = " " + formatElapsed(now - started)
            }
        }
        // A failed step's reason goes before its time, as on prefixed output's end line,
        // when the whole label fits beside them: the label is never cut for it, and in a
        // narrow row the time alone is laid out as it would be.
        if let reason = row.reason, row.state == .failed || row.state == .timedOut {
            let detailed = " " + reason + time
            if left - DisplayWidth.rowColumns(of: detailed) >= row.labelWidth { time = detailed }
        }
        let timeWidth = DisplayWidth.rowColumns(of: time)
        // The label takes what the time leaves; when that is too little, the time goes.
        let labelRoom = left - timeWidth >= min(row.labelWidth, 12) ? left - timeWidth : left
        if row.labelWidth <= labelRoom {
            text += row.label
            left -= row.labelWidth
        } else {
            let label = DisplayWidth.fit(row.label, in: labelRoom)
            text += label.text
            left -= label.width
        }
        if !time.isEmpty, timeWidth <= left {
            text += style.paint(time, "2")
            left -= timeWidth
        }
        let unfinished = row.unfinished[row.latestStream].bytes
        if row.state == .running, !row.lastLine.isEmpty || !unfinished.isEmpty, left >= 2 + 4 {
            // The output goes in as plain text cut to the room left: an escape sequence
            // would act on the terminal at every redraw.
            let room = left - 2
            if row.lineChanged || row.shownLine.room != room {
                let shown = unfinished.isEmpty ? row.lastLine : unfinished
                let plain = shown.withUnsafeBytes { TerminalText.plain($0) }
                let fitted = DisplayWidth.fit(plain, in: room)
                rows[i].shownLine = (fitted.text, fitted.width, room)
                rows[i].lineChanged = false
            }
            if rows[i].shownLine.width > 0 { text += style.paint("  " + rows[i].shownLine.text, "2") }
        }
        return text
    }
}
