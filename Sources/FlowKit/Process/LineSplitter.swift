#if canImport(Glibc)
import Glibc
#endif
import CFlowSys

/// Cuts a byte stream arriving in arbitrary chunks into whole lines.
///
/// Lines end with `\n`; a `\r` right before it is dropped too (`\r\n`), wherever the chunk
/// boundary falls. A lone `\r` (progress bars) is kept as ordinary content. A partial last
/// line is kept until more bytes come, or until `finish`. Scanning uses `memchr`, and lines
/// that lie inside one chunk are handed out without copying.
///
/// A line longer than `longestLine` is handed out in pieces of about that size, each as a
/// line of its own: the unterminated part is held in memory, and a step that wrote
/// megabytes without a newline (binary data, `tr -d '\n'`) made flow hold all of it, a few
/// times over (a 200 MB line: 600 MB in `prefixed`, 1.2 GB in `json`). journald
/// (`LineMax`) and Docker's log drivers cut long lines the same way.
public struct LineSplitter: Sendable {
    /// The longest line handed out whole (1 MiB, its newline aside).
    public static let longestLine = 1 << 20

    /// Bytes of the current, unterminated line (at most `longestLine` between calls).
    private var pending: [UInt8] = []

    public init() {}

    /// Whether bytes of an unterminated line are waiting.
    public var hasPartialLine: Bool { !pending.isEmpty }

    /// Feeds `chunk`, calling `line` for every line it completes (without the terminator).
    /// The buffer passed to `line` is only valid during the call.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ line: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try feedLines(chunk) { try LineSplitter.forEachLine(in: $0, line) }
    }

    /// Feeds `chunk`, calling `lines` with runs of whole lines, each ending in `\n` (`\r`
    /// kept): at most one run for a line completed from earlier chunks, then one for every
    /// line that lies wholly inside the chunk, without copying. Consumers that must see one
    /// line at a time (`forEachLine`) pay for the splitting; those that store or prefix the
    /// output in bulk do not.
    public mutating func feedLines(_ chunk: UnsafeRawBufferPointer, _ lines: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        let count = chunk.count
        var start = 0
        if !pending.isEmpty {
            guard let found = memchr(base, 0x0A, count) else {
                pending.append(contentsOf: chunk)
                try cutLongLine(lines)
                return
            }
            let newline = base.distance(to: UnsafeRawPointer(found))
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base, count: newline + 1))
            try pending.withUnsafeBytes(lines)
            pending.removeAll(keepingCapacity: pending.capacity <= 64 * 1024)
            start = newline + 1
        }
        guard start < count else { return }
        guard let found = cflow_memrchr(base + start, 0x0A, count - start) else {
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: count - start))
            try cutLongLine(lines)
            return
        }
        let last = base.distance(to: UnsafeRawPointer(found))
        try lines(UnsafeRawBufferPointer(start: base + start, count: last + 1 - start))
        if last + 1 < count {
            pending.append(contentsOf: UnsafeRawBufferPointer(start: base + last + 1, count: count - last - 1))
            try cutLongLine(lines)
        }
    }

    /// Hands out the held part of a line longer than `longestLine`, in pieces of that size
    /// (each with a `\n` added, as the run `lines` expects), keeping the rest. A piece ends
    /// before a UTF-8 sequence rather than inside it, so that each piece decodes alone.
    private mutating func cutLongLine(_ lines: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        while pending.count > LineSplitter.longestLine {
            var cut = LineSplitter.longestLine
            while cut > LineSplitter.longestLine - 3, pending[cut] & 0xC0 == 0x80 { cut -= 1 }
            var piece = Array(pending[..<cut])
            piece.append(0x0A)
            try piece.withUnsafeBytes(lines)
            pending.removeFirst(cut)
        }
    }

    /// Calls `line` for each line of a run from `feedLines` (without `\n`, or `\r\n`).
    public static func forEachLine(in run: UnsafeRawBufferPointer, _ line: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard let base = run.baseAddress else { return }
        var start = 0
        while start < run.count {
            let newline = memchr(base + start, 0x0A, run.count - start).map { base.distance(to: UnsafeRawPointer($0)) } ?? run.count
            var end = newline
            if end > start && base.load(fromByteOffset: end - 1, as: UInt8.self) == 0x0D { end -= 1 }
            try line(UnsafeRawBufferPointer(start: base + start, count: end - start))
            start = newline + 1
        }
    }

    /// The unterminated last line, if any, as a run ending in `\n` (end of stream).
    public mutating func finishLines(_ lines: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard !pending.isEmpty else { return }
        pending.append(0x0A)
        try pending.withUnsafeBytes(lines)
        pending.removeAll()
    }

    /// Feeds `bytes` (convenience over the raw-buffer form).
    public mutating func feed(_ bytes: [UInt8], _ line: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { try feed($0, line) }
    }

    /// Hands out the unterminated last line, if any (end of stream).
    public mutating func finish(_ line: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try finishLines { try LineSplitter.forEachLine(in: $0, line) }
    }
}
