#if canImport(Glibc)
import Glibc
#endif

/// `--junit FILE`: a JUnit XML report of the run's steps, written when the run ends.
/// Each leaf step is a test case; failed and timed-out steps carry their output (one whose
/// failure `continue_on_error` allowed is a skipped case with it, see `write`). A group
/// is one too when it failed by itself, as the run's summary counts it (its own `timeout`,
/// a `use` given a value not `allowed`): its steps end only `cancelled` or `skipped`, so
/// the report of a failed run would otherwise show no failure. So is any step whose undo
/// failed (`undo_failed`, a failure): the undo steps are not cases of their own (the
/// summary does not count them either), their output and failure go to the step they undo.
public final class JUnitReport: RunObserver, @unchecked Sendable {
    struct Case {
        var step: StepRef
        var state: StepState = .pending
        var elapsed: Double = 0
        var message: String?
        /// Its failure was allowed (`StepTransition.isAllowedFailure`): reported as skipped.
        var allowed = false
        /// Why its undo failed (`undo failed: down exit 4 0.1s`).
        var undoMessage: String?
        /// The end of the step's output (and its undo's), as chunks of about `chunkBytes`:
        /// a failure's reason is in its last lines, so the oldest chunk goes first.
        var chunks: [[UInt8]] = []
        var count = 0
        /// Bytes of output dropped from the front to keep at most `maxOutputBytes`.
        var omitted = 0
    }

    /// Output kept per case (at least; cut at a line start when written).
    static let maxOutputBytes = 1 << 20
    static let chunkBytes = 64 * 1024

    let path: String
    var workflow = ""
    /// Each step's `classname`, by path (see `classnames(of:)`).
    let classnames: [String: String]
    var cases: [Case] = []
    var index: [String: Int] = [:]
    /// Where a step's later attempts start in its output (a retry, its group's).
    var marks = AttemptMarks()
    /// Set when the file cannot be written.
    public private(set) var failure: String?

    /// Set for `flow undo`: the steps it left alone (its skips) are no cases, as its summary
    /// does not count them (`Executor`'s undo); a report of 2 reversed steps said `skipped="3"`.
    let undoing: Bool

    public init(path: String, plan: Plan, undoing: Bool = false) {
        self.path = path
        self.undoing = undoing
        workflow = plan.workflowName
        classnames = Self.classnames(of: plan)
    }

    /// A case's `classname`: the workflow's name, then the action a plan of one action
    /// runs, then the name of each enclosing group that has one (an unnamed `use`, its
    /// action's), joined by `.` (`release.deploy.checks`). JUnit viewers show it as the
    /// suite or class a case belongs to (GitLab's Suite column, Jenkins' package and class,
    /// the test reporters of GitHub Actions) and group cases by it; the step's path
    /// (`release.4.2`) grouped them by numbers. Names are identifiers (no `.`), so the
    /// dots only part groups, as pytest's module and class or gotestsum's packages do; but
    /// for a workflow named after its file (`my.release.yaml`: `my.release`), whose dots a
    /// viewer splits as if they were groups' (uniqueness does not depend on them). The
    /// case's `name`, the step's label, is unique in the plan (`name@path` for a name that
    /// several steps have, `shell@2.1` for an unnamed step), so (classname, name) is unique
    /// too and the same from one run of the file to the next.
    static func classnames(of plan: Plan) -> [String: String] {
        var out: [String: String] = [:]
        func visit(_ node: PlanNode, _ prefix: String) {
            for child in node.children + node.finally {
                out[child.path] = prefix
                var inner = prefix
                if let name = child.name, child.isGroup {
                    inner += "." + name
                } else if case .use(let action, _) = child.kind {
                    inner += "." + action
                }
                visit(child, inner)
            }
        }
        visit(plan.root, plan.action.map { "\(plan.workflowName).\($0)" } ?? plan.workflowName)
        return out
    }

    public func handle(_ event: RunEvent) {
        switch event {
        case .runStarted(let info): workflow = info.workflowName
        case .stepState(let t):
            marks.observe(t)
            if t.step.isUndo {
                // The first undo step that fails says why its step ended `undo_failed`.
                if [.failed, .timedOut].contains(t.to), let i = undoneCase(t.step.path), cases[i].undoMessage == nil {
                    cases[i].undoMessage = "undo failed: \(t.step.label) \(Self.reason(t))"
                }
                return
            }
            guard t.step.isLeaf || index[t.step.path] != nil || failsByItself(t) else { return }
            let i = index[t.step.path] ?? {
                cases.append(Case(step: t.step))
                index[t.step.path] = cases.count - 1
                return cases.count - 1
            }()
            // A retried group's step is reversed once per attempt it succeeded in, the latest
            // first: an earlier one's reversal does not take back a later one's failed undo,
            // which the summary and the journal count (`undo_failed`). The case passed.
            if cases[i].state == .undoFailed, t.to == .undoing || t.to == .undone { return }
            cases[i].state = t.to
            cases[i].allowed = t.isAllowedFailure
            if let elapsed = t.elapsed, ![.undoing, .undone, .undoFailed].contains(t.to) { cases[i].elapsed = elapsed }
            if [.failed, .timedOut, .cancelled].contains(t.to) { cases[i].message = Self.reason(t) }
        case .runFinished(let outcome): write(outcome)
        case .note(_, _, let allowing):
            // A retry called off: the failure its attempt ended in is the step's end, and
            // an allowed one (`Executor.calledOff`); it was a failure a retry would follow.
            for path in allowing {
                guard let i = index[path], [.failed, .timedOut].contains(cases[i].state), !cases[i].allowed else { continue }
                cases[i].allowed = true
                cases[i].message = cases[i].message.map { "\($0) (\(StepTransition.allowedFailureMark))" }
            }
        }
    }

    /// Why a step ended as it did (`exit 2`, `timed out after 30s`), without the time the
    /// live output adds: a case has its `time` attribute (`timed out after 300ms 0.3s`
    /// read as one phrase).
    static func reason(_ t: StepTransition) -> String {
        var untimed = t
        untimed.elapsed = nil
        return ReporterStyle.detail(untimed)
    }

    /// Whether a group's end is a failure of its own, one no case inside it shows: its own
    /// time-out, a `use` that failed before its steps ran, an undo that failed.
    func failsByItself(_ t: StepTransition) -> Bool {
        switch t.to {
        case .timedOut, .undoFailed: return true
        case .failed: return t.isGroupsOwnFailure
        default: return false
        }
    }

    /// The case of the step whose `undo` holds the undo step at `path` (`3` for `3.u1`,
    /// `2.1` for `2.1.u2.1`).
    func undoneCase(_ path: String) -> Int? {
        let parts = path.split(separator: ".")
        guard let u = parts.firstIndex(where: { $0.first == "u" && $0.dropFirst().allSatisfy(\.isNumber) }) else { return nil }
        return index[parts[..<u].joined(separator: ".")]
    }

    /// Keeps the last `maxOutputBytes` of a case's output. It kept the first MiB and dropped
    /// the rest without a word, so a step that printed more lost the lines that said why
    /// it failed.
    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        guard let i = step.isUndo ? undoneCase(step.path) : index[step.path] else { return }
        if let mark = marks.take(step.path) { append(Array(mark.utf8), to: i) }
        append(line, to: i)
    }

    /// Appends one line (`\n` added) to case `i`'s output, dropping its oldest chunks past
    /// `maxOutputBytes`.
    private func append(_ line: some Collection<UInt8>, to i: Int) {
        if cases[i].chunks.isEmpty || cases[i].chunks[cases[i].chunks.count - 1].count >= Self.chunkBytes {
            cases[i].chunks.append([])
        }
        cases[i].chunks[cases[i].chunks.count - 1].append(contentsOf: line)
        cases[i].chunks[cases[i].chunks.count - 1].append(0x0A)
        cases[i].count += line.count + 1
        while cases[i].chunks.count > 1, cases[i].count - cases[i].chunks[0].count >= Self.maxOutputBytes {
            let dropped = cases[i].chunks.removeFirst().count
            cases[i].count -= dropped
            cases[i].omitted += dropped
        }
    }

    /// A case's kept output: at most `maxOutputBytes`, from a line start, after a line that
    /// says how much went before it.
    static func keptOutput(_ c: Case) -> String {
        var bytes = c.chunks.flatMap { $0 }
        var omitted = c.omitted
        if bytes.count > maxOutputBytes {
            let window = bytes.count - maxOutputBytes
            var cut = window
            while cut < bytes.count - 1, bytes[cut - 1] != 0x0A { cut += 1 }
            if cut >= bytes.count - 1 {
                // One line longer than the window: its end, not inside a UTF-8 sequence.
                cut = window
                while cut < bytes.count, bytes[cut] & 0xC0 == 0x80 { cut += 1 }
            }
            bytes.removeFirst(cut)
            omitted += cut
        }
        let text = String(decoding: bytes, as: UTF8.self)
        return omitted == 0 ? text : "… (\(omitted) bytes of earlier output left out)\n" + text
    }

    /// `s` as XML text or attribute value. CR is written `&#13;` (a parser reads a raw one
    /// as LF), and in attributes LF and tab as `&#10;` and `&#9;` too (a parser reads raw
    /// ones there as spaces).
    static func escape(_ s: String, attribute: Bool = true) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\r": out += "&#13;"
            case "\n" where attribute: out += "&#10;"
            case "\t" where attribute: out += "&#9;"
            case "\n", "\t": out.unicodeScalars.append(scalar)
            default:
                // XML 1.0 forbids most control characters, even escaped.
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF { out += "\u{FFFD}" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    func write(_ outcome: RunOutcome) {
        // A group's case stays only if the group ended failed by itself (a retry of it may
        // have made good the attempt that made it one).
        let cases = cases.filter {
            ($0.step.isLeaf || [.failed, .timedOut, .undoFailed].contains($0.state)) && !(undoing && $0.state == .skipped)
        }
        let failures = cases.filter { [.failed, .timedOut, .undoFailed].contains($0.state) && !$0.allowed }.count
        let skipped = cases.filter { [.skipped, .cancelled].contains($0.state) || $0.allowed }.count
        let time = String(format3(outcome.elapsed))
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"flow\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\" time=\"\(time)\">\n"
        xml += "  <testsuite name=\"\(Self.escape(workflow))\" tests=\"\(cases.count)\" failures=\"\(failures)\" errors=\"0\" skipped=\"\(skipped)\" time=\"\(time)\">\n"
        for c in cases {
            xml += "    <testcase name=\"\(Self.escape(c.step.label))\" classname=\"\(Self.escape(classnames[c.step.path] ?? workflow))\" time=\"\(format3(c.elapsed))\""
            let text = Self.keptOutput(c)
            switch c.state {
            case .failed where c.allowed, .timedOut where c.allowed:
                // A failure `continue_on_error` allowed does not fail the run (exit 0), and
                // a report that counted it a failure would fail the CI job's report step
                // where the run passed: skipped, as pytest reports an expected failure
                // (xfail), with its reason and output kept.
                xml += ">\n      <skipped message=\"\(Self.escape(c.message ?? c.state.rawValue))\"/>\n"
                if !text.isEmpty { xml += "      <system-out>\(Self.escape(text, attribute: false))</system-out>\n" }
                xml += "    </testcase>\n"
            case .failed, .timedOut, .undoFailed:
                let message = c.state == .undoFailed ? c.undoMessage ?? "undo failed" : c.message ?? c.state.rawValue
                xml += ">\n      <failure message=\"\(Self.escape(message))\" type=\"\(c.state.rawValue)\"/>\n"
                if !text.isEmpty { xml += "      <system-out>\(Self.escape(text, attribute: false))</system-out>\n" }
                xml += "    </testcase>\n"
            case .skipped, .cancelled:
                xml += ">\n      <skipped message=\"\(c.state.rawValue)\"/>\n    </testcase>\n"
            default:
                xml += "/>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        failure = Self.write(xml, to: path)
    }

    /// The report of a run refused before it started (an invalid workflow, a `--var` or
    /// ACTION that does not fit it: exit 2): one failed case, `validate`, holding what flow
    /// said. A CI job's report step then shows why (it found no file, and said only that).
    /// Returns why the file could not be written, if it could not.
    public static func writeRefusal(to path: String, workflow: String, message: String, details: String) -> String? {
        let name = escape(workflow)
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"flow\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\" time=\"0.000\">\n"
        xml += "  <testsuite name=\"\(name)\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\" time=\"0.000\">\n"
        xml += "    <testcase name=\"validate\" classname=\"\(name)\" time=\"0.000\">\n"
        xml += "      <failure message=\"\(escape(message))\" type=\"refused\"/>\n"
        if !details.isEmpty { xml += "      <system-out>\(escape(details, attribute: false))</system-out>\n" }
        xml += "    </testcase>\n  </testsuite>\n</testsuites>\n"
        return write(xml, to: path)
    }

    /// Writes `xml` to `path`; the reason when it cannot (the path's control characters
    /// escaped, as in every message of flow's).
    static func write(_ xml: String, to path: String) -> String? {
        let shown = ControlEscaping.escaped(path)
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { return "cannot write \(shown): \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        var xml = xml
        return xml.withUTF8 { buffer in
            writeAll(fd, UnsafeRawBufferPointer(buffer)) ? nil : "cannot write \(shown): \(String(cString: strerror(errno)))"
        }
    }

    func format3(_ value: Double) -> String {
        let millis = Int((value * 1000).rounded())
        let fraction = String(millis % 1000)
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
