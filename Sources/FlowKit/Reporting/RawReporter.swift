/// `--output raw`: steps write straight to flow's stdout and stderr, unprefixed and
/// uncaptured (the fastest path, like make); flow adds only the summary line.
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
        // Print steps still arrive here; shell steps write directly.
        let writer = stream == .stdout ? out : err
        writer.append(line)
        writer.append(byte: 0x0A)
        writer.flush()
    }

    public func finish() {
        out.flush()
        err.flush()
    }
}
