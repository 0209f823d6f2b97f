#if canImport(Glibc)
import Glibc
#endif

/// Reads a run's output file (see `JournalSchema.outputLines`), opened on the first read and
/// closed with the value.
final class RunOutputFile {
    let path: String
    private var fd: Int32 = -1

    init(path: String) {
        self.path = path
    }

    deinit {
        if fd >= 0 { close(fd) }
    }

    /// `length` bytes at `offset`; the rows point only at bytes written before they were
    /// committed, so a short file means it was damaged or removed by hand.
    func read(offset: Int64, length: Int) throws(JournalError) -> [UInt8] {
        if fd < 0 {
            fd = open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw JournalError("cannot read the run's output \(path): \(String(cString: strerror(errno)))")
            }
        }
        var bytes = [UInt8](repeating: 0, count: length)
        var done = 0
        while done < length {
            let n = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + done, length - done, off_t(offset) + off_t(done)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                throw JournalError("the run's output \(path) is shorter than the journal says (damaged, or changed by hand)")
            }
            done += n
        }
        return bytes
    }
}
