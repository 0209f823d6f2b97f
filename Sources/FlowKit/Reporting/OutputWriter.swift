#if canImport(Glibc)
import Glibc
#endif

/// A byte buffer in front of a file descriptor: whole lines go out in few `write` calls.
///
/// Reporters are called under the event bus lock, so lines written through one writer
/// never interleave mid-line.
final class OutputWriter: @unchecked Sendable {
    let fd: Int32
    private var buffer: [UInt8] = []
    private let limit: Int

    init(fd: Int32, limit: Int = 1 << 16) {
        self.fd = fd
        self.limit = limit
        buffer.reserveCapacity(limit + 4096)
    }

    func append(_ text: String) {
        var text = text
        text.withUTF8 { buffer.append(contentsOf: $0) }
        if buffer.count >= limit { flush() }
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        buffer.append(contentsOf: bytes)
        if buffer.count >= limit { flush() }
    }

    func append(byte: UInt8) {
        buffer.append(byte)
    }

    func flush() {
        guard !buffer.isEmpty else { return }
        buffer.withUnsafeBytes { writeAll(fd, $0) }
        buffer.removeAll(keepingCapacity: true)
    }
}
