/// Keeps the output of every running step so the output of failed steps can be shown
/// again at the end of the run.
///
/// Each step keeps the tail of its output in memory as a few byte chunks (about `maxBytes`
/// in all): recording appends to the last chunk, and the oldest chunk leaves memory whole,
/// so a chatty step costs one copy of its output, not one per trim. It sits on the hot
/// path of every output line. With a `spill` (`tty`, whose contract is "the full output of
/// failed steps") a chunk leaving memory goes to that file, and the replay reads it back:
/// memory stays bounded and nothing is lost; without one (`prefixed`, which has shown every
/// line already), or once the file cannot be written, it is dropped and the replay says so.
struct FailureLog {
    /// Bytes kept in memory per step (at least; the most recent ones, cut at a line start
    /// on replay when earlier ones were dropped).
    static let maxBytes = 64 * 1024
    static let chunkBytes = 16 * 1024

    private struct Tail {
        var chunks: [[UInt8]] = []
        var count = 0
        /// The step's earliest output, moved to `spill`, in order.
        var spilled: [OutputSpill.Extent] = []
        /// Bytes of the oldest chunks dropped, for the replay's "left out" line: all of them
        /// without a spill, those after the spill failed with one.
        var dropped = 0
    }

    private var tails: [String: Tail] = [:]
    private(set) var failed: [StepRef] = []
    /// The paths of `failed`: a step is replayed once however many of its attempts failed.
    /// (Compared as references, a retried attempt's, unmarked as allowed, and the last
    /// one's, marked, were two steps, and a step allowed to fail was replayed twice.)
    private var failedPaths: Set<String> = []
    /// Where a step's later attempts start in its output (a retry, its group's).
    private var marks = AttemptMarks()
    /// The command that prints a step's whole output (`flow logs ID STEP`, given its label),
    /// named after the "left out" line; nil, or returning nil, when the run is not recorded.
    var fullOutput: (@Sendable (String) -> String?)?
    /// Where output leaving memory goes (see the type's summary); nil drops it.
    var spill: OutputSpill?

    /// A log that drops what leaves memory, or (`spill`) moves it to that file.
    init(spill: OutputSpill? = nil) {
        self.spill = spill
    }

    mutating func record(_ step: StepRef, _ stream: OutputChannel, _ line: UnsafeRawBufferPointer) {
        record(step, lines: line)
        withUnsafeBytes(of: UInt8(0x0A)) { record(step, lines: $0) }
    }

    /// Records whole lines that already end in `\n` (one dictionary access per run).
    mutating func record(_ step: StepRef, lines: UnsafeRawBufferPointer) {
        if let mark = marks.take(step.path) {
            Array((mark + "\n").utf8).withUnsafeBytes { Self.append($0, to: &tails[step.path, default: Tail()], spill: spill) }
        }
        Self.append(lines, to: &tails[step.path, default: Tail()], spill: spill)
    }

    private static func append(_ bytes: UnsafeRawBufferPointer, to tail: inout Tail, spill: OutputSpill?) {
        if tail.chunks.isEmpty || tail.chunks[tail.chunks.count - 1].count >= chunkBytes {
            tail.chunks.append([])
            tail.chunks[tail.chunks.count - 1].reserveCapacity(max(chunkBytes, bytes.count))
        }
        tail.chunks[tail.chunks.count - 1].append(contentsOf: bytes)
        tail.count += bytes.count
        while tail.chunks.count > 1, tail.count - tail.chunks[0].count >= maxBytes {
            let chunk = tail.chunks.removeFirst()
            tail.count -= chunk.count
            // Once one chunk is dropped, later ones are too: what is kept stays in order.
            if let spill, tail.dropped == 0, let extent = chunk.withUnsafeBytes({ spill.store($0) }) {
                tail.spilled.append(extent)
            } else {
                tail.dropped += chunk.count
            }
        }
    }

    /// The kept output of `path`: at most `maxBytes`, starting at a line start — or, when
    /// the last line alone is longer than that, its end after `…` (cut between characters),
    /// so a failed step that printed one long line still shows what it said last.
    func kept(_ path: String) -> [UInt8] {
        keptAndOmitted(path).bytes
    }

    /// The kept output of `path` (see `kept`) and how many of the bytes the step printed
    /// before it are not in it.
    func keptAndOmitted(_ path: String) -> (bytes: [UInt8], omitted: Int) {
        guard let tail = tails[path] else { return ([], 0) }
        var bytes = tail.chunks.flatMap { $0 }
        var omitted = tail.dropped
        // Cut only where something was dropped: after spilled output the tail goes on from
        // where the spill ends, mid-line or not.
        if bytes.count > Self.maxBytes, spill == nil || omitted > 0 {
            let window = bytes.count - Self.maxBytes
            var cut = window
            // A line start with something after it (the last byte is usually `\n`).
            while cut < bytes.count - 1, bytes[cut - 1] != 0x0A { cut += 1 }
            if cut < bytes.count - 1 {
                bytes.removeFirst(cut)
                omitted += cut
            } else {
                cut = window
                // Not inside a UTF-8 sequence: skip continuation bytes (10xxxxxx).
                while cut < bytes.count, bytes[cut] & 0xC0 == 0x80 { cut += 1 }
                bytes.replaceSubrange(0..<cut, with: Array("…".utf8))
                omitted += cut
            }
        }
        return (bytes, omitted)
    }

    /// Notes a step's transition: its start (a later attempt's is marked in its output),
    /// its failure (replayed), or another end (its output is let go).
    mutating func observe(_ t: StepTransition) {
        switch t.to {
        case .running:
            marks.observe(t)
        case .failed, .timedOut:
            guard t.step.isLeaf else { return }
            if failedPaths.insert(t.step.path).inserted { failed.append(t.step) }
        case .succeeded, .skipped, .cancelled:
            // Most steps print nothing: no hashing of their path then.
            if !tails.isEmpty, let tail = tails.removeValue(forKey: t.step.path), !tail.spilled.isEmpty {
                spill?.release(tail.spilled)
            }
        default: break
        }
    }

    /// Replays the failed steps' output, unless `stopped` says otherwise (asked before each
    /// step and each spilled extent): a whole output can take a while to write, and a Ctrl-C
    /// meanwhile means the user has seen enough.
    func replay(to writer: OutputWriter, style: ReporterStyle, stopped: () -> Bool = { false }) {
        // Whether what was written ends a line: an extent may end inside one (a line and
        // its `\n` are recorded apart), and a note after it needs a line of its own.
        var atLineStart = true
        func stop(_ step: StepRef) {
            let whole = fullOutput?(step.label).map { "; `\($0)` prints it" } ?? ""
            writer.append((atLineStart ? "" : "\n") + "… (the rest of the output of failed steps left out: interrupted\(whole))\n")
            writer.flush()
        }
        for step in failed {
            let (bytes, omitted) = keptAndOmitted(step.path)
            let spilled = tails[step.path]?.spilled ?? []
            guard !bytes.isEmpty || !spilled.isEmpty else { continue }
            if stopped() { return stop(step) }
            writer.append(style.paint("── output of \(step.label) ──", "1;31") + "\n")
            atLineStart = true
            if let spill {
                for extent in spilled {
                    if stopped() { return stop(step) }
                    // The file was written by this run moments ago: a read that fails is an
                    // I/O error, said in place of the bytes (the rest still follows).
                    if let code = spill.load(extent, { bytes in
                        writer.append(bytes)
                        if let last = bytes.last { atLineStart = last == 0x0A }
                    }) {
                        writer.append((atLineStart ? "" : "\n")
                                      + "… (\(extent.count) bytes of output could not be read back: \(SpawnError.message(code)))\n")
                        atLineStart = true
                    }
                }
            }
            // Said, as the JUnit report says it: a replay that starts mid-way looked like the
            // step's whole output (the contract promises the full output of failed steps).
            if omitted > 0 {
                let whole = fullOutput?(step.label).map { "; `\($0)` prints all of it" } ?? ""
                // With a spill, bytes are dropped only after it failed: say why.
                let why = spill?.failure.map { ": \($0)" } ?? ""
                writer.append((atLineStart ? "" : "\n") + "… (\(omitted) bytes of \(spilled.isEmpty ? "earlier" : "later") output left out\(why)\(whole))\n")
            }
            bytes.withUnsafeBytes { writer.append($0) }
        }
        writer.flush()
    }
}
