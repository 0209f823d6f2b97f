#if canImport(Glibc)
import Glibc
#endif

/// Cuts a byte stream arriving in arbitrary chunks into whole lines.
///
/// Lines end with `\n`; a `\r` right before it is dropped too (`\r\n`), wherever the chunk
/// boundary falls. A lone `\r` (progress bars) is kept as ordinary content. A partial last
/// line is kept until more bytes come, or until `finish`. Scanning uses `memchr`, and lines
/// that lie inside one chunk are handed out without copying.
public struct LineSplitter: Sendable {
    /// Bytes of the current, unterminated line.
    private var pending: [UInt8] = []

    public init() {}

    /// Whether bytes of an unterminated line are waiting.
    public var hasPartialLine: Bool { !pending.isEmpty }

    /// Feeds `chunk`, calling `line` for every line it completes (without the terminator).
    /// The buffer passed to `line` is only valid during the call.
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ line: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        let count = chunk.count
        var start = 0
        while start < count {
            guard let found = memchr(base + start, 0x0A, count - start) else {
                pending.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: count - start))
                return
            }
            let newline = base.distance(to: UnsafeRawPointer(found))
            if pending.isEmpty {
                var end = newline
                if end > start && base.load(fromByteOffset: end - 1, as: UInt8.self) == 0x0D { end -= 1 }
                try line(UnsafeRawBufferPointer(start: base + start, count: end - start))
            } else {
                pending.append(contentsOf: UnsafeRawBufferPointer(start: base + start, count: newline - start))
                if pending.last == 0x0D { pending.removeLast() }
                try pending.withUnsafeBytes(line)
                // Keep a normal-sized buffer for reuse; let a huge one go.
                pending.removeAll(keepingCapacity: pending.capacity <= 64 * 1024)
            }
            start = newline + 1
        }
    }

    /// Feeds `bytes` (convenience over the raw-buffer form).
    public mutating func feed(_ bytes: [UInt8], _ line: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        try bytes.withUnsafeBytes { try feed($0, line) }
    }

    /// Hands out the unterminated last line, if any (end of stream).
    public mutating func finish(_ line: (UnsafeRawBufferPointer) throws -> Void) rethrows {
        guard !pending.isEmpty else { return }
        try pending.withUnsafeBytes(line)
        pending.removeAll()
    }
}
