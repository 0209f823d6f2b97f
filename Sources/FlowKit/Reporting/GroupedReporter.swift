/// `--output grouped`: each step's output as one block after the step ends, so concurrent
/// steps never mix. Under GitHub Actions (`GITHUB_ACTIONS=true`) the blocks are
/// collapsible `::group::` log groups and failures become `::error::` annotations.
public final class GroupedReporter: RunObserver, @unchecked Sendable {
    let out = OutputWriter(fd: 1)
    let style: ReporterStyle
    let github: Bool
    var buffers: [String: [UInt8]] = [:]
    var log = FailureLog()

    public init(color: Bool, github: Bool) {
        style = ReporterStyle(color: color)
        self.github = github
    }

    public func handle(_ event: RunEvent) {
        switch event {
        case .stepState(let t):
            log.finished(t)
            guard t.step.isLeaf, t.to.isFinal, t.to != .skipped else { return }
            let detail = ReporterStyle.detail(t)
            let title = "\(t.to.symbol) \(t.step.label)\(detail.isEmpty ? "" : " (\(detail))")"
            let body = buffers.removeValue(forKey: t.step.path) ?? []
            if github {
                out.append("::group::\(title)\n")
                body.withUnsafeBytes { out.append($0) }
                out.append("::endgroup::\n")
                if [.failed, .timedOut].contains(t.to) {
                    out.append("::error title=flow step \(t.step.label) failed::\(t.step.label): \(detail)\n")
                }
            } else {
                out.append(style.paint("── \(title) ──", [.failed, .timedOut].contains(t.to) ? "1;31" : "1") + "\n")
                body.withUnsafeBytes { out.append($0) }
            }
            out.flush()
        case .note(let step, let message):
            out.append((step.map { "\($0.label): " } ?? "") + message + "\n")
            out.flush()
        case .runFinished(let outcome):
            out.append(style.summary(outcome) + "\n")
            out.flush()
        default:
            break
        }
    }

    public func output(_ step: StepRef, _ stream: OutputChannel, line: UnsafeRawBufferPointer) {
        buffers[step.path, default: []].append(contentsOf: line)
        buffers[step.path, default: []].append(0x0A)
    }

    public func finish() {
        out.flush()
    }
}
