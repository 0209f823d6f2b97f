#if canImport(Glibc)
import Glibc
#endif

/// `--junit FILE`: a JUnit XML report of the run's steps, written when the run ends.
/// Each leaf step is a test case; failed and timed-out steps carry their output.
public final class JUnitReport: RunObserver, @unchecked Sendable {
    struct Case {
        var step: StepRef
        var state: StepState = .pending
        var elapsed: Double = 0
        var message: String?
        var output: [UInt8] = []
    }

    let path: String
    var workflow = ""
    var cases: [Case] = []
    var index: [String: Int] = [:]
    /// Set when the file cannot be written.
    public private(set) var failure: String?

    public init(path: String) {
        self.path = path
    }

    public func handle(_ event: RunEvent) {
        switch event {
        case .runStarted(let info): workflow = info.workflowName
        case .stepState(let t):
            guard t.step.isLeaf, !t.step.isUndo else { return }
            let i = index[t.step.path] ?? {
                cases.append(Case(step: t.step))
                index[t.step.path] = cases.count - 1
                return cases.count - 1
            }()
            cases[i].state = t.to
            if let elapsed = t.elapsed { cases[i].elapsed = elapsed }
            if [.failed, .timedOut, .cancelled].contains(t.to) { cases[i].message = ReporterStyle.detail(t) }
        case .runFinished(let outcome): write(outcome)
        case .note: break
        }
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        guard let i = index[step.path], cases[i].output.count < 1 << 20 else { return }
        cases[i].output.append(contentsOf: line)
        cases[i].output.append(0x0A)
    }

    static func escape(_ s: String) -> String {
        var out = ""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "\n", "\t", "\r": out.unicodeScalars.append(scalar)
            default:
                // XML 1.0 forbids most control characters, even escaped.
                if scalar.value < 0x20 || scalar.value == 0xFFFE || scalar.value == 0xFFFF { out += "\u{FFFD}" } else { out.unicodeScalars.append(scalar) }
            }
        }
        return out
    }

    func write(_ outcome: RunOutcome) {
        let failures = cases.filter { [.failed, .timedOut].contains($0.state) }.count
        let skipped = cases.filter { [.skipped, .cancelled].contains($0.state) }.count
        let time = String(format3(outcome.elapsed))
        var xml = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
        xml += "<testsuites name=\"flow\" tests=\"\(cases.count)\" failures=\"\(failures)\" skipped=\"\(skipped)\" time=\"\(time)\">\n"
        xml += "  <testsuite name=\"\(Self.escape(workflow))\" tests=\"\(cases.count)\" failures=\"\(failures)\" skipped=\"\(skipped)\" time=\"\(time)\">\n"
        for c in cases {
            xml += "    <testcase name=\"\(Self.escape(c.step.label))\" classname=\"\(Self.escape(workflow)).\(Self.escape(c.step.path))\" time=\"\(format3(c.elapsed))\""
            let text = String(decoding: c.output, as: UTF8.self)
            switch c.state {
            case .failed, .timedOut:
                xml += ">\n      <failure message=\"\(Self.escape(c.message ?? c.state.rawValue))\" type=\"\(c.state.rawValue)\"/>\n"
                if !text.isEmpty { xml += "      <system-out>\(Self.escape(text))</system-out>\n" }
                xml += "    </testcase>\n"
            case .skipped, .cancelled:
                xml += ">\n      <skipped message=\"\(c.state.rawValue)\"/>\n    </testcase>\n"
            default:
                xml += "/>\n"
            }
        }
        xml += "  </testsuite>\n</testsuites>\n"
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            failure = "cannot write \(path): \(String(cString: strerror(errno)))"
            return
        }
        defer { close(fd) }
        xml.withUTF8 { buffer in
            if !writeAll(fd, UnsafeRawBufferPointer(buffer)) {
                failure = "cannot write \(path): \(String(cString: strerror(errno)))"
            }
        }
    }

    func format3(_ value: Double) -> String {
        let millis = Int((value * 1000).rounded())
        let fraction = String(millis % 1000)
        return "\(millis / 1000).\(String(repeating: "0", count: 3 - fraction.count))\(fraction)"
    }
}
