/// Keeps the recent output of every step so the output of failed steps can be shown again
/// at the end of the run.
struct FailureLog {
    /// Lines kept per step (the most recent ones).
    static let maxLines = 500

    private var lines: [String: [(OutputChannel, [UInt8])]] = [:]
    private(set) var failed: [StepRef] = []

    mutating func record(_ step: StepRef, _ stream: OutputChannel, _ line: UnsafeRawBufferPointer) {
        var kept = lines[step.path, default: []]
        if kept.count >= Self.maxLines { kept.removeFirst(kept.count - Self.maxLines + 1) }
        kept.append((stream, Array(line)))
        lines[step.path] = kept
    }

    mutating func finished(_ t: StepTransition) {
        guard t.step.isLeaf || t.step.kind == "shell" else { return }
        switch t.to {
        case .failed, .timedOut:
            if !failed.contains(t.step) { failed.append(t.step) }
        case .succeeded, .skipped:
            lines[t.step.path] = nil
        default: break
        }
    }

    /// Replays the failed steps' output.
    func replay(to writer: OutputWriter, style: ReporterStyle) {
        for step in failed {
            guard let kept = lines[step.path], !kept.isEmpty else { continue }
            writer.append(style.paint("── output of \(step.label) ──", "1;31") + "\n")
            for (_, line) in kept {
                line.withUnsafeBytes { writer.append($0) }
                writer.append(byte: 0x0A)
            }
        }
        writer.flush()
    }
}
