#if canImport(Glibc)
import Glibc
#endif

/// A byte buffer in front of a file descriptor: whole lines go out in few `write` calls.
///
/// Reporters are called under the event bus lock, so lines written through one writer
/// never interleave mid-line. The buffer is raw memory appended to with `memcpy`: the
/// prefixed reporter appends twice per output line, millions of times for a chatty build.
final class OutputWriter: @unchecked Sendable {
    let fd: Int32
    private let limit: Int
    private var capacity: Int
    private var storage: UnsafeMutableRawPointer
    private var count = 0

    init(fd: Int32, limit: Int = 1 << 16) {
        self.fd = fd
        self.limit = limit
        capacity = limit + 4096
        storage = .allocate(byteCount: capacity, alignment: 16)
    }

    deinit {
        storage.deallocate()
    }

    func append(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    func append(_ bytes: UnsafeRawBufferPointer) {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return }
        if count + bytes.count > capacity {
            flush()
            if bytes.count > capacity {
                if !writeAll(fd, bytes) { LostOutput.shared.record(fd: fd, errno: errno) }
                return
            }
        }
        (storage + count).copyMemory(from: base, byteCount: bytes.count)
        count += bytes.count
        if count >= limit { flush() }
    }

    func append(byte: UInt8) {
        if count == capacity { flush() }
        storage.storeBytes(of: byte, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    func flush() {
        guard count > 0 else { return }
        // A refused write is not retried (the destination is full or gone), but the run
        // says at its end that lines were lost (`LostOutput`).
        if !writeAll(fd, UnsafeRawBufferPointer(start: storage, count: count)) {
            LostOutput.shared.record(fd: fd, errno: errno)
        }
        count = 0
    }
}
