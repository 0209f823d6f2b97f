#if canImport(Glibc)
import Glibc
#endif

/// Writes every byte of `bytes` to `fd`, retrying short writes and EINTR. Returns false
/// when the descriptor refuses (a closed pipe, a full disk): callers decide whether that
/// matters.
@discardableResult
public func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Bool {
    guard let base = bytes.baseAddress else { return true }
    var offset = 0
    while offset < bytes.count {
        let n = write(fd, base + offset, bytes.count - offset)
        if n < 0 {
            if errno == EINTR { continue }
            return false
        }
        offset += n
    }
    return true
}
