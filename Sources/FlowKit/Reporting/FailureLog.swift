/// Keeps the recent output of every running step so the output of failed steps can be
/// shown again at the end of the run.
///
/// Each step keeps the tail of its output as bytes (at most `maxBytes`), so recording a
/// line is an append, not an allocation: it sits on the hot path of every output line.
struct FailureLog {
    /// Bytes kept per step (the most recent ones, cut at a line start).
    static let maxBytes = 64 * 1024

    private var buffers: [String: [UInt8]] = [:]
    private(set) var failed: [StepRef] = []

    mutating func record(_ step: StepRef, _ stream: OutputChannel, _ line: UnsafeRawBufferPointer) {
        record(step, lines: line)
        withUnsafeBytes(of: UInt8(0x0A)) { record(step, lines: $0) }
    }

    /// Records whole lines that already end in `\n` (one dictionary access per run).
    mutating func record(_ step: StepRef, lines: UnsafeRawBufferPointer) {
        let over = { (bytes: inout [UInt8]) -> Bool in
            bytes.append(contentsOf: lines)
            return bytes.count > 2 * Self.maxBytes
        }(&buffers[step.path, default: []])
        if over { trim(step.path) }
    }

    private mutating func trim(_ path: String) {
        guard var bytes = buffers[path], bytes.count > Self.maxBytes else { return }
        var cut = bytes.count - Self.maxBytes
        while cut < bytes.count, bytes[cut - 1] != 0x0A { cut += 1 }
        bytes.removeFirst(cut)
        buffers[path] = bytes
    }

    mutating func finished(_ t: StepTransition) {
        switch t.to {
        case .failed, .timedOut:
            guard t.step.isLeaf else { return }
            trim(t.step.path)
            if !failed.contains(t.step) { failed.append(t.step) }
        case .succeeded, .skipped, .cancelled:
            buffers[t.step.path] = nil
        default: break
        }
    }

    /// Replays the failed steps' output.
    func replay(to writer: OutputWriter, style: ReporterStyle) {
        for step in failed {
            guard let bytes = buffers[step.path], !bytes.isEmpty else { continue }
            writer.append(style.paint("── output of \(step.label) ──", "1;31") + "\n")
            bytes.withUnsafeBytes { writer.append($0) }
        }
        writer.flush()
    }
}
