/// Color and symbols for human-readable reporters.
struct ReporterStyle: Sendable {
    var color: Bool

    func paint(_ text: String, _ code: String) -> String {
        color ? "\u{1B}[\(code)m\(text)\u{1B}[0m" : text
    }

    func state(_ state: StepState) -> String {
        switch state {
        case .succeeded, .undone: return paint(state.symbol, "32")
        case .failed, .timedOut, .undoFailed: return paint(state.symbol, "31")
        case .cancelled: return paint(state.symbol, "33")
        case .running, .retrying, .undoing: return paint(state.symbol, "36")
        default: return paint(state.symbol, "2")
        }
    }

    /// What an allowed failure's end says after its reason (`exit 3 (allowed to fail)`):
    /// the `✗` stays, the state being `failed` all the same.
    static let allowedMark = StepTransition.allowedFailureMark

    /// `exit 2`, `signal 9`, `timed out`… for the end line of a step; `(allowed to fail)`
    /// after it for a failure `continue_on_error` allowed, unless `markAllowed` is false
    /// (a reporter that says it its own way).
    static func detail(_ t: StepTransition, markAllowed: Bool = true) -> String {
        // Built directly (no array joined): one per finished step.
        var text: String
        switch t.to {
        case .failed where !t.step.isLeaf && t.reason == StepTransition.insideFailedReason:
            // The step inside says why, on its own line above.
            text = ""
        case .failed:
            if let signal = t.signal { text = "signal \(signal)" } else if let code = t.exitCode, code != 0 {
                text = "exit \(code)"
            } else {
                // A reason may quote a value from the run (a `with` value not allowed, a
                // key written to `FLOW_OUTPUT`): escaped, as flow's own text always is.
                text = ControlEscaping.escaped(t.reason ?? "")
            }
        case .timedOut: text = ControlEscaping.escaped(t.reason ?? "timed out")
        case .cancelled: text = "cancelled"
        case .undoFailed: text = "undo failed"
        case .undone: text = "undone"
        default: text = ""
        }
        if markAllowed, t.isAllowedFailure { text += text.isEmpty ? "(\(allowedMark))" : " (\(allowedMark))" }
        if let elapsed = t.elapsed {
            if !text.isEmpty { text += " " }
            text += formatElapsed(elapsed)
        }
        return text
    }

    /// The summary line: counts per final state and the wall time. A count some of which
    /// are allowed failures says how many (`2 failed (1 allowed)`; `1 failed (allowed)`
    /// when all are): the state is the same, whether it failed the run is not. Only the
    /// states some step ended in are counted (`1 failed, 2 skipped`, as pytest's `1 failed`);
    /// `0 succeeded` stands alone for a run in which no step ended at all. It led every
    /// undo's summary (`0 succeeded, 2 undone`: an undo runs no step of the workflow to
    /// succeed) and every run whose first step failed.
    func summary(_ outcome: RunOutcome) -> String {
        // `pending`: steps a second signal (or SIGQUIT) left unreached, as the journal has them.
        let order: [StepState] = [.succeeded, .failed, .timedOut, .cancelled, .skipped, .pending, .undone, .undoFailed]
        let anyCounted = order.contains { (outcome.counts[$0] ?? 0) > 0 }
        // Joined by hand, as `ResumeHint` builds its command: the generic `joined(separator:)`
        // looked up a conformance of `[String]` on its first call (about 100,000 instructions,
        // between a run's last step and flow's exit).
        var parts = ""
        for state in order {
            let count = outcome.counts[state] ?? 0
            guard count > 0 || (state == .succeeded && !anyCounted) else { continue }
            let note = RunOutcome.allowedNote(count: count, allowed: outcome.allowedFailures[state] ?? 0)
            if !parts.isEmpty { parts += ", " }
            parts += "\(count) \(state.rawValue)\(note)"
        }
        let head: String
        switch outcome.status {
        case .succeeded: head = paint("✓ succeeded", "1;32")
        case .failed: head = paint("✗ failed", "1;31")
        case .cancelled: head = paint("⊘ cancelled", "1;33")
        case .running: head = "running"
        }
        return "\(head): " + parts + " in \(formatElapsed(outcome.elapsed))"
    }
}
